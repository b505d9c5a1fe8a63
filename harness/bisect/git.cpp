// The git driving room of `nightjar bisect`: see harness/bisect/git.h.
#include "harness/bisect/git.h"

#include <cctype>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/text.h"

namespace nightjar {

namespace fs = std::filesystem;

CommandResult Git::run(const std::vector<std::string>& args, bool allow_fail) const {
  CommandSpec s;
  s.argv = {"git", "-C", dir_};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.env["LC_ALL"] = "C";  // git's messages are parsed
  s.env["GIT_TERMINAL_PROMPT"] = "0";
  s.env["GIT_EDITOR"] = "true";
  for (const auto& [k, v] : env_) s.env[k] = v;
  s.timeout_sec = 600;
  s.interrupted = [] { return false; };
  CommandResult r = run_command(s);
  if (!r.started) throw EnvironmentError("git: " + r.error + "; install git (apt-get install git)");
  if (!r.ok() && !allow_fail)
    throw EnvironmentError(fmt::format("`git {}` in {} {}: {}", join(args, " "), dir_, r.describe(),
                                       output_tail(r.err.empty() ? r.out : r.err, 4)));
  return r;
}

std::string Git::line(const std::vector<std::string>& args) const {
  return std::string(trim(run(args).out));
}

std::string resolve_commit(const Git& git, const std::string& rev, const char* flag) {
  if (rev.empty())
    throw UsageError(fmt::format("bisect: {} is required; write {} REV", flag, flag));
  CommandResult r = git.run({"rev-parse", "--verify", "--quiet", rev + "^{commit}"}, true);
  if (!r.ok())
    throw UsageError(
        fmt::format("{} {}: not a commit in {}; write a commit id, tag or branch "
                    "(`git -C {} log --oneline` lists them)",
                    flag, rev, git.dir(), git.dir()));
  return std::string(trim(r.out));
}

std::string subject_of(const Git& git, const std::string& sha) {
  CommandResult r = git.run({"log", "-1", "--format=%s", sha}, true);
  return r.ok() ? std::string(trim(r.out)) : "";
}

bool bisect_in_progress(const Git& git) {
  std::string p = git.line({"rev-parse", "--git-path", "BISECT_START"});
  if (!fs::path(p).is_absolute()) p = git.dir() + "/" + p;
  return fs::exists(p);
}

bool has_tracked_changes(const Git& git) {
  return !trim(git.run({"status", "--porcelain", "--untracked-files=no"}).out).empty();
}

BisectState parse_bisect_output(const std::string& output) {
  BisectState s;
  std::stringstream in(output);
  std::string line;
  bool listing = false;
  while (std::getline(in, line)) {
    line = std::string(trim(line));
    if (auto pos = line.find(" is the first bad commit");
        pos != std::string::npos && s.first_bad.empty())
      s.first_bad = line.substr(0, pos);
    if (line.find("only 'skip'ped commits left to test") != std::string::npos)
      s.only_skipped = true;
    if (line.find("could be any of:") != std::string::npos) {
      listing = true;
      continue;
    }
    if (listing) {
      if (line.empty() || line.find("cannot bisect more") != std::string::npos) {
        listing = false;
        continue;
      }
      s.candidates.push_back(line.substr(0, line.find(' ')));
    }
  }
  return s;
}

BisectState mark_commit(const Git& git, BisectDecision decision, const std::string& sha) {
  const std::string word = to_string(decision);
  CommandResult r = git.run({"bisect", word, sha}, true);
  BisectState state = parse_bisect_output(r.out + "\n" + r.err);
  if (!r.ok() && !state.only_skipped)
    throw EnvironmentError(fmt::format("`git bisect {} {}` in {} {}: {}", word, sha, git.dir(),
                                       r.describe(),
                                       output_tail(r.err.empty() ? r.out : r.err, 4)));
  return state;
}

BisectGuard::~BisectGuard() {
  if (!started_) return;
  try {
    CommandResult r = git_.run({"bisect", "reset"}, true);
    if (!r.ok())
      std::cerr << "nightjar: warning: `git bisect reset` in " << git_.dir()
                << " failed: " << output_tail(r.err, 3) << "; run it yourself\n";
  } catch (const std::exception& e) {
    std::cerr << "nightjar: warning: " << e.what() << "\n";
  }
}

std::vector<std::string> parents_of(const Git& git, const std::string& commit) {
  std::vector<std::string> p = split(git.line({"rev-list", "--parents", "-n", "1", commit}), ' ');
  if (!p.empty()) p.erase(p.begin());
  return p;
}

std::vector<std::string> branch_list_args(const std::string& p1, const std::string& p2) {
  return {"rev-list", "--reverse", "--no-merges", "--right-only", "--cherry-pick", p1 + "..." + p2};
}

std::vector<std::string> branch_commits(const Git& git, const std::string& p1,
                                        const std::string& p2) {
  return split_blanks(git.run(branch_list_args(p1, p2)).out);
}

std::string cherry_pick(const Git& wt, const std::string& commit) {
  CommandResult r = wt.run({"-c", "commit.gpgsign=false", "cherry-pick", commit}, true);
  if (r.ok()) return "";
  std::vector<std::string> conflicts =
      split_blanks(wt.run({"diff", "--name-only", "--diff-filter=U"}, true).out);
  const std::string said = r.out + "\n" + r.err;
  wt.run({"cherry-pick", "--abort"}, true);
  wt.run({"reset", "--quiet", "--hard", "HEAD"}, true);
  if (!conflicts.empty()) return "cherry-pick conflicts in " + join(conflicts, ", ");
  if (said.find("empty") != std::string::npos)
    return "nothing to apply: its change is already there";
  return "cherry-pick failed: " + output_tail(said, 3);
}

namespace {

// The identifier right before the first '(' of `text`, or "".
std::string name_before_paren(std::string_view text) {
  const std::size_t paren = text.find('(');
  if (paren == std::string_view::npos) return "";
  std::size_t end = paren;
  while (end > 0 && text[end - 1] == ' ') --end;
  std::size_t start = end;
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  while (start > 0 && ident(text[start - 1])) --start;
  if (start == end || std::isdigit(static_cast<unsigned char>(text[start]))) return "";
  return std::string(text.substr(start, end - start));
}

// A changed line that defines a function: starts at column 0 with a letter
// or '_' (not a keyword of a statement), names `identifier(`, and does not
// end with ';' (a declaration or a call).
bool defines_function(std::string_view line) {
  if (line.empty() || !(std::isalpha(static_cast<unsigned char>(line[0])) || line[0] == '_'))
    return false;
  for (const char* kw :
       {"if ", "if(", "for ", "while ", "return", "switch", "else", "do ", "case "})
    if (line.starts_with(kw)) return false;
  const std::string_view t = trim(line);
  return t.find('(') != std::string_view::npos && !t.ends_with(';') && !t.ends_with(',');
}

}  // namespace

std::map<std::string, std::string> parse_changed_functions(const std::string& diff) {
  std::map<std::string, std::string> out;
  std::string file, old_file;
  for (const auto& line : split(diff, '\n')) {
    if (line.starts_with("--- ")) {
      old_file = line.starts_with("--- a/") ? line.substr(6) : "";
    } else if (line.starts_with("+++ ")) {
      file = line.starts_with("+++ b/") ? line.substr(6) : old_file;
    } else if (line.starts_with("@@")) {
      const std::size_t close = line.find("@@", 2);
      if (close == std::string::npos) continue;
      const std::string name = name_before_paren(std::string_view(line).substr(close + 2));
      if (!name.empty() && !file.empty()) out.emplace(name, file);
    } else if ((line.starts_with("+") || line.starts_with("-")) && !file.empty()) {
      const std::string_view body = std::string_view(line).substr(1);
      if (!defines_function(body)) continue;
      const std::string name = name_before_paren(body);
      if (!name.empty()) out.emplace(name, file);
    }
  }
  return out;
}

std::map<std::string, std::string> changed_functions(const Git& git, const std::string& sha) {
  CommandResult r = git.run({"show", "--format=", "-U0", "--no-color", "--no-ext-diff", "-M", sha});
  return parse_changed_functions(r.out);
}

}  // namespace nightjar
