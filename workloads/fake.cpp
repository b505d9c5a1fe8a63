// The `fake` workload: deterministic scripted samples with no system access,
// so that everything downstream of measurement (store, statistics, compare,
// check, bisect, reports) is tested without root, kernels or noise.
//
// throughput sample i (1-based measured iteration) is either the i-th entry
// of `script` (cycling), or value * exp(sigma * z_i) with z_i ~ N(0,1) drawn
// from a generator seeded by (seed, i) and sigma = sqrt(ln(1 + cv^2)), so the
// samples are lognormal with mean `value` and coefficient of variation `cv`%.
// A scripted 0 (or negative) throughput is a rate that cannot be a
// measurement: the runner stores it invalid (impossible_value()); the
// iterations of `invalid_at` are invalid as a workload decides it (every
// value of the iteration, with the reason "scripted invalid sample at
// iteration N").
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <sstream>
#include <thread>

#include "results/model/exit_codes.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

// Comma-separated numbers of parameter `field` (`script`, `invalid_at`).
std::vector<double> parse_script(const std::string& text, const char* field = "script") {
  std::vector<double> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size())
      throw ParamError{
          field,
          "'" + item + "' is not a number; write comma-separated numbers such as 100,101.5,99"};
    values.push_back(v);
  }
  return values;
}

// `invalid_at`: comma-separated iteration numbers (1-based).
std::vector<std::int64_t> parse_iterations(const std::string& text) {
  std::vector<std::int64_t> out;
  for (double v : parse_script(text, "invalid_at")) {
    if (!(v >= 1) || v != std::floor(v))
      throw ParamError{"invalid_at", "'" + text +
                                         "': write measured iteration numbers (1 is the first) "
                                         "separated by commas, such as 2,5"};
    out.push_back(static_cast<std::int64_t>(v));
  }
  return out;
}

class FakeSession : public CellSession {
 public:
  FakeSession(const Cell& cell, RunContext& ctx)
      : ctx_(ctx),
        value_(cell.number("value")),
        cv_(cell.number("cv") / 100.0),
        seed_(static_cast<std::uint64_t>(cell.integer("seed"))),
        script_(parse_script(cell.text("script"))),
        fail_at_(cell.integer("fail_at")),
        invalid_at_(parse_iterations(cell.text("invalid_at"))),
        sleep_(cell.seconds("sleep")) {}

  void warmup() override { pause(); }

  IterationResult measure() override {
    ++iteration_;
    pause();
    IterationResult r;
    if (fail_at_ > 0 && iteration_ == fail_at_) {
      r.failure = "scripted failure at iteration " + std::to_string(iteration_);
      return r;
    }
    double x;
    if (!script_.empty()) {
      x = script_[static_cast<std::size_t>(iteration_ - 1) % script_.size()];
    } else {
      std::mt19937_64 gen(seed_ * 1000003ULL + static_cast<std::uint64_t>(iteration_));
      std::normal_distribution<double> z(0.0, 1.0);
      double sigma = std::sqrt(std::log1p(cv_ * cv_));
      // E[exp(sigma z - sigma^2/2)] = 1, so the mean stays `value`.
      x = value_ * std::exp(sigma * z(gen) - sigma * sigma / 2);
    }
    r.metrics["throughput"] = x;
    if (x > 0) r.metrics["latency"] = 1000.0 / x;
    if (std::find(invalid_at_.begin(), invalid_at_.end(), iteration_) != invalid_at_.end())
      r.invalid = "scripted invalid sample at iteration " + std::to_string(iteration_);
    return r;
  }

 private:
  // Sleeps `sleep` seconds in small steps so SIGINT is noticed promptly.
  void pause() {
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(sleep_);
    while (std::chrono::steady_clock::now() < end) {
      if (ctx_.interrupted()) throw Interrupted();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (ctx_.interrupted()) throw Interrupted();
  }

  RunContext& ctx_;
  double value_, cv_;
  std::uint64_t seed_;
  std::vector<double> script_;
  std::int64_t fail_at_;
  std::vector<std::int64_t> invalid_at_;
  double sleep_;
  std::int64_t iteration_ = 0;
};

class FakeWorkload : public Workload {
 public:
  std::string_view name() const override { return "fake"; }
  std::string_view summary() const override {
    return "scripted, seeded samples without touching the system (for tests)";
  }
  std::vector<ParamDescriptor> params() const override {
    return {
        {.name = "value",
         .type = ParamType::number,
         .unit = "ops/s",
         .default_value = "100",
         .doc = "mean throughput of the samples",
         .min = 0.0},
        {.name = "cv",
         .type = ParamType::number,
         .unit = "%",
         .default_value = "0",
         .doc = "coefficient of variation of the lognormal noise",
         .min = 0.0,
         .max = 1000.0},
        {.name = "seed",
         .type = ParamType::count,
         .default_value = "1",
         .doc = "seed of the noise; same seed, same samples",
         .min = 0.0},
        {.name = "script",
         .type = ParamType::text,
         .unit = "ops/s",
         .default_value = "",
         .doc = "comma-separated throughput values used in order instead of noise"},
        {.name = "fail_at",
         .type = ParamType::count,
         .unit = "iteration",
         .default_value = "0",
         .doc = "measured iteration that fails (0: none)",
         .min = 0.0},
        {.name = "invalid_at",
         .type = ParamType::text,
         .unit = "iterations",
         .default_value = "",
         .doc = "comma-separated measured iterations whose samples the workload marks invalid"},
        {.name = "sleep",
         .type = ParamType::duration,
         .unit = "s",
         .default_value = "0s",
         .doc = "time each iteration takes",
         .min = 0.0,
         .max = 3600.0},
        {.name = "skip",
         .type = ParamType::text,
         .default_value = "",
         .doc = "if set, the cell is skipped with this reason"},
    };
  }
  std::vector<MetricDescriptor> metrics() const override {
    return {
        {.name = "throughput",
         .unit = "ops/s",
         .direction = Direction::higher_is_better,
         .mean = MeanKind::harmonic,
         .doc = "scripted rate"},
        {.name = "latency",
         .unit = "ms",
         .direction = Direction::lower_is_better,
         .mean = MeanKind::arithmetic,
         .doc = "1000 / throughput"},
    };
  }
  void validate(const Cell& cell, const MachineFacts&) const override {
    (void)parse_script(cell.text("script"));
    (void)parse_iterations(cell.text("invalid_at"));
  }
  std::optional<std::string> unmet_requirement(const Cell& cell) const override {
    const std::string& reason = cell.text("skip");
    if (reason.empty()) return std::nullopt;
    return reason;
  }
  std::unique_ptr<CellSession> start(const Cell& cell, RunContext& ctx) const override {
    return std::make_unique<FakeSession>(cell, ctx);
  }
};

NIGHTJAR_WORKLOAD(FakeWorkload);

}  // namespace

}  // namespace nightjar
