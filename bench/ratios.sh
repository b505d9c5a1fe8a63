# Summaries of per-round ratios for the side-by-side benchmarks (sourced by
# bench/*.sh; one place for their statistics). Each reads one positive
# number a line on stdin and prints one line.
#
# gmean_ci: "G [lo, hi]", the geometric mean and its 95% Student t interval
#   on the log ratios (t quantiles 0.975 for 1..30 degrees of freedom, then
#   1.96); "G [-, -]" for one round.
# median_ci: "M [lo, hi] (n=N, P%)", the median and a distribution-free
#   interval for it from order statistics: the widest pair (x_(k), x_(n+1-k))
#   whose binomial coverage P = 1 - 2 * P(Binom(n, 1/2) < k) is at least 95%,
#   else the full range (k = 1) with its lower coverage named (3 rounds:
#   75%). Source: the order-statistic interval for a quantile (Hahn & Meeker,
#   Statistical Intervals, 1991, ch. 5); one disturbed round moves it by one
#   order statistic, not by its size.

gmean_ci() {
  awk 'BEGIN { split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 " \
                     "2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086 " \
                     "2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", t, " ") }
       NF { l[++n] = log($1); s += l[n] }
       END {
         if (n == 0) { printf "- [-, -]"; exit }
         m = s / n
         if (n < 2) { printf "%.3f [-, -]", exp(m); exit }
         for (i = 1; i <= n; i++) v += (l[i] - m) ^ 2
         se = sqrt(v / (n - 1) / n)
         q = (n - 1 <= 30) ? t[n - 1] : 1.96
         printf "%.3f [%.3f, %.3f]", exp(m), exp(m - q * se), exp(m + q * se)
       }'
}

median_ci() {
  sort -g | awk 'NF { x[++n] = $1 }
    END {
      if (n == 0) { printf "- [-, -] (n=0)"; exit }
      m = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
      # cdf[j] = P(Binom(n, 1/2) <= j)
      p = 0.5 ^ n; c = 0
      for (j = 0; j <= n; j++) { c += p; cdf[j] = c; p = p * (n - j) / (j + 1) }
      k = 1; cover = 1 - 2 * 0.5 ^ n
      for (j = 2; j <= int((n + 1) / 2); j++)
        if (1 - 2 * cdf[j - 1] >= 0.95) { k = j; cover = 1 - 2 * cdf[j - 1] }
      printf "%.3f [%.3f, %.3f] (n=%d, %.0f%%)", m, x[k], x[n + 1 - k], n, 100 * cover
    }'
}
