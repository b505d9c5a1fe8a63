// A synthetic git repository for the bisect tests: N commits of a small C
// program whose runtime rises by `step_pct` at commit k, optionally with one
// commit that does not compile. Written with one `git fast-import` so that a
// 64-commit repository takes a few milliseconds.
//
// The program (prog.c) does a little real work proportional to its WORK
// constant and prints `runtime=SECONDS`: WORK/10000 s times lognormal noise
// of CoeffVar `cv_pct`, drawn from (seed, n) where n counts its invocations
// in a counter file. So a trial is deterministic given its seed and the
// sequence of runs, and the job's samples have real, known noise for Welch.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "workloads/sys/process.h"

namespace nightjar::test {

struct SyntheticRepo {
  std::string dir;                   ///< work tree
  std::vector<std::string> commits;  ///< sha of commit i (0 = oldest)
};

struct SyntheticRepoSpec {
  int commits = 64;
  int regress_at = -1;  ///< first commit with the higher runtime (-1: none)
  int broken = -1;      ///< commit that does not compile (-1: none); the next one compiles again
  double step_pct = 10;
  double cv_pct = 3;
};

inline std::string git_out(const std::string& dir, const std::vector<std::string>& args,
                           const std::string& input_file = "") {
  CommandSpec s;
  s.argv = {"git", "-C", dir};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  if (!input_file.empty())
    s.argv = {"/bin/sh", "-c", "git -C '" + dir + "' " + args.front() + " < '" + input_file + "'"};
  s.env["GIT_AUTHOR_NAME"] = s.env["GIT_COMMITTER_NAME"] = "nightjar test";
  s.env["GIT_AUTHOR_EMAIL"] = s.env["GIT_COMMITTER_EMAIL"] = "test@nightjar.invalid";
  CommandResult r = run_command(s);
  if (!r.ok())
    throw std::runtime_error("git " + args.front() + ": " + r.describe() + ": " + r.tail());
  return r.out;
}

inline std::string program_source(int commit, int work, bool broken, double cv_pct) {
  std::ostringstream c;
  c << "/* commit " << commit << " */\n"
    << "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    << "#define WORK " << work << "\n#define CV " << cv_pct / 100 << "\n"
    << (broken ? "this line does not compile;\n" : "") << R"(static uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
int main(int argc, char** argv) {
  const char* counter = argc > 1 ? argv[1] : "counter";
  uint64_t seed = argc > 2 ? strtoull(argv[2], 0, 10) : 1;
  unsigned long n = 0;
  FILE* f = fopen(counter, "r");
  if (f) {
    if (fscanf(f, "%lu", &n) != 1) n = 0;
    fclose(f);
  }
  f = fopen(counter, "w");
  if (!f) return 2;
  fprintf(f, "%lu\n", n + 1);
  fclose(f);
  uint64_t a = mix(seed * 1000003ULL + n), b = mix(a);
  double u1 = ((a >> 11) + 0.5) / 9007199254740992.0, u2 = (b >> 11) / 9007199254740992.0;
  double z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
  double sigma = sqrt(log(1 + CV * CV));
  volatile double x = 0;
  for (long i = 0; i < WORK * 100L; ++i) x += i;
  printf("runtime=%.6f\n", WORK / 10000.0 * exp(sigma * z - sigma * sigma / 2));
  return 0;
}
)";
  return c.str();
}

/// Creates the repository in `dir` (which must exist and be empty).
inline SyntheticRepo make_synthetic_repo(const std::string& dir, const SyntheticRepoSpec& spec) {
  SyntheticRepo repo;
  repo.dir = dir;
  git_out(dir, {"init", "-q", "-b", "main"});
  std::ostringstream stream;
  auto data = [&](const std::string& text) {
    stream << "data " << text.size() << "\n" << text << "\n";
  };
  for (int i = 0; i < spec.commits; ++i) {
    int work = 1000;
    if (spec.regress_at >= 0 && i >= spec.regress_at)
      work = static_cast<int>(1000 * (1 + spec.step_pct / 100) + 0.5);
    stream << "commit refs/heads/main\nmark :" << i + 1 << "\n"
           << "committer nightjar test <test@nightjar.invalid> " << 1700000000 + i * 3600
           << " +0000\n";
    data("commit " + std::to_string(i) + (i == spec.regress_at ? ": slower" : "") +
         (i == spec.broken ? ": broken" : ""));
    stream << "M 644 inline prog.c\n";
    data(program_source(i, work, i == spec.broken, spec.cv_pct));
    if (i == 0) {
      stream << "M 644 inline .gitignore\n";
      data("prog\n");
    }
  }
  std::string file = dir + "/.git/nightjar-import";
  std::ofstream(file) << stream.str();
  git_out(dir, {"fast-import --quiet"}, file);
  git_out(dir, {"reset", "-q", "--hard", "main"});
  std::string list = git_out(dir, {"rev-list", "--reverse", "main"});
  std::istringstream in(list);
  std::string sha;
  while (in >> sha) repo.commits.push_back(sha);
  if (static_cast<int>(repo.commits.size()) != spec.commits)
    throw std::runtime_error("fast-import lost commits");
  return repo;
}

/// The exec job measuring ./prog at the repository top.
inline std::string synthetic_job(const std::string& counter, std::uint64_t seed,
                                 int iterations = 5) {
  return "workload: exec\nparams:\n  command: \"./prog " + counter + " " + std::to_string(seed) +
         "\"\n  metrics: \"runtime:s:lower\"\niterations: " + std::to_string(iterations) +
         "\nwarmup: 0\n";
}

constexpr const char* kSyntheticBuild = "cc -O1 -o prog prog.c -lm";

}  // namespace nightjar::test
