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
  /// WORK of commit 0 as a C expression of prog.c's invocation count `n`
  /// ("" = 1000): e.g. "(n < 5 ? 1300 : 1000)" makes the good endpoint's
  /// first run of 5 slower than its second.
  std::string good_work;
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

/// prog.c of commit `commit`. `work` is a C expression (a number, or one of
/// macros from headers that `includes` names, e.g. `#include "knob.h"\n`).
inline std::string program_source(int commit, const std::string& work, bool broken, double cv_pct,
                                  const std::string& includes = "") {
  std::ostringstream c;
  c << "/* commit " << commit << " */\n"
    << "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    << includes << "#define WORK (" << work << ")\n#define CV " << cv_pct / 100 << "\n"
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

inline std::string program_source(int commit, int work, bool broken, double cv_pct) {
  return program_source(commit, std::to_string(work), broken, cv_pct);
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
    data(i == 0 && !spec.good_work.empty()
             ? program_source(i, spec.good_work, i == spec.broken, spec.cv_pct)
             : program_source(i, work, i == spec.broken, spec.cv_pct));
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

/// A repository whose first bad commit is a merge of two good parents
/// (docs/bisect.md "A merge as the first bad commit"), made with git itself:
///
///   main:  c0 - c1 ----------- M - c2 - c3
///            \                 /
///   side:     s1 - s2 - s3 ----
///
/// prog.c runs 10% slower when both MAIN_KNOB (main_knob.h) and SIDE_KNOB
/// (side_knob.h) are 1. c1 turns MAIN_KNOB on and s2 SIDE_KNOB: every commit
/// of either branch measures good, M and after it bad, and on top of c1 (the
/// first parent) s2 is the commit that turns it bad. s1 and c1 both rewrite
/// notes.txt, so s1 does not apply on top of c1 (M resolves the conflict);
/// s3 changes side.txt only.
///
/// With `evil`, the branches change nothing that matters (c1 main.txt, the
/// side commits side.txt) and the merge's own resolution turns both knobs on
/// (an "evil merge"): no branch commit turns c1 bad.
struct MergeRepo {
  std::string dir;
  std::string c0, c1, merge, c3;
  std::vector<std::string> side;  ///< s1, s2, s3 (s1, s2 with `evil`)
};

inline MergeRepo make_merge_repo(const std::string& dir, bool evil) {
  MergeRepo r;
  r.dir = dir;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
  };
  auto commit = [&](const std::string& message) {
    git_out(dir, {"add", "-A"});
    git_out(dir, {"commit", "-q", "-m", message});
    return git_out(dir, {"rev-parse", "HEAD"}).substr(0, 40);
  };
  auto knob = [&](const char* name, int on) {
    write(std::string(name) == "MAIN_KNOB" ? "main_knob.h" : "side_knob.h",
          std::string("#define ") + name + " " + std::to_string(on) + "\n");
  };
  git_out(dir, {"init", "-q", "-b", "main"});
  write("prog.c", program_source(0, "(MAIN_KNOB && SIDE_KNOB) ? 1100 : 1000", false, 3,
                                 "#include \"main_knob.h\"\n#include \"side_knob.h\"\n"));
  knob("MAIN_KNOB", 0);
  knob("SIDE_KNOB", 0);
  write("notes.txt", "notes\n");
  write(".gitignore", "prog\n");
  r.c0 = commit("c0");
  git_out(dir, {"checkout", "-q", "-b", "side"});
  if (evil) {
    write("side.txt", "s1\n");
    r.side.push_back(commit("s1"));
    write("side.txt", "s1\ns2\n");
    r.side.push_back(commit("s2"));
  } else {
    write("notes.txt", "notes from the side\n");
    r.side.push_back(commit("s1: notes"));
    knob("SIDE_KNOB", 1);
    r.side.push_back(commit("s2: side knob on"));
    write("side.txt", "s3\n");
    r.side.push_back(commit("s3"));
  }
  git_out(dir, {"checkout", "-q", "main"});
  if (evil) {
    write("main.txt", "c1\n");
    r.c1 = commit("c1");
  } else {
    knob("MAIN_KNOB", 1);
    write("notes.txt", "notes from main\n");
    r.c1 = commit("c1: main knob on");
  }
  // The merge stops on the conflict in notes.txt (not with `evil`); either
  // way it is committed by hand.
  CommandSpec merge;
  merge.argv = {"git", "-C", dir, "merge", "-q", "--no-ff", "--no-commit", "side"};
  run_command(merge);
  if (evil) {
    knob("MAIN_KNOB", 1);
    knob("SIDE_KNOB", 1);
  } else {
    write("notes.txt", "notes from main\nnotes from the side\n");
  }
  r.merge = commit("merge side");
  write("main.txt", "c2\n");
  commit("c2");
  write("main.txt", "c2\nc3\n");
  r.c3 = commit("c3");
  return r;
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
