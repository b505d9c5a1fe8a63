// Seeded samples of the two-level run model (results/stats/run_model.h), for
// the tests of runs as the unit and of the sources of the between-run
// variation.
#pragma once

#include <cmath>
#include <random>
#include <vector>

namespace nightjar::test {

/// R runs of n iterations of exp(mu + b_i + e_ij), b ~ N(0, sb), e ~ N(0, sw)
/// (sb, sw: standard deviations on ln x).
inline std::vector<std::vector<double>> simulate_runs(std::mt19937_64& rng, int runs, int n,
                                                      double mu, double sb, double sw) {
  std::normal_distribution<double> b(0.0, sb), e(0.0, sw);
  std::vector<std::vector<double>> out;
  for (int i = 0; i < runs; ++i) {
    const double bi = b(rng);
    std::vector<double> run;
    for (int j = 0; j < n; ++j) run.push_back(std::exp(mu + bi + e(rng)));
    out.push_back(run);
  }
  return out;
}

}  // namespace nightjar::test
