// The one exit-code table of nightjar (docs/reference.md "Exit codes"), and the error
// types that carry a code to main(). Every subcommand returns an ExitCode;
// nothing else calls exit() with a number.
#pragma once

#include <stdexcept>
#include <string>

namespace nightjar {

/// Process exit codes. git bisect reads 0 as good, 1 as bad, 125 as skip and
/// >= 128 as abort (docs/reference.md "git bisect run"), so a usage error (2) is
/// never produced by a bisect step: there it becomes 128 (abort).
enum class ExitCode : int {
  ok = 0,              ///< success; no significant regression
  regression = 1,      ///< significant regression found
  usage = 2,           ///< bad flag, bad job file
  inconclusive = 3,    ///< too few samples or too noisy to decide
  environment = 4,     ///< environment, workload or database error
  confounded = 5,      ///< check --strict-env: a fact differs between the sides not by
                       ///< intent (docs/environment.md "Confounders")
  bisect_skip = 125,   ///< bisect step only: cannot test this commit
  bisect_abort = 128,  ///< bisect step only: stop the bisection
  interrupted = 130,   ///< SIGINT/SIGTERM; partial run kept as aborted
};

/// An error that ends the command with a given exit code. The message is
/// complete and user-facing: it names the file/field and says what to do.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

/// Bad command line or job file (exit 2). Raised before anything is written
/// to the results database.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(ExitCode::usage, message) {}
};

/// The environment, a workload or the database failed (exit 4).
class EnvironmentError : public Error {
 public:
  explicit EnvironmentError(const std::string& message) : Error(ExitCode::environment, message) {}
};

/// SIGINT/SIGTERM arrived (exit 130). Thrown out of a measurement so that
/// destructors clean up; the runner marks the run aborted.
class Interrupted : public Error {
 public:
  Interrupted() : Error(ExitCode::interrupted, "interrupted") {}
};

/// The numeric value main() returns for a code.
constexpr int to_int(ExitCode c) {
  return static_cast<int>(c);
}

}  // namespace nightjar
