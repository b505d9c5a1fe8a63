// Unit under test: the words of the tree that point at files. A clone of the
// repository must be able to follow every path its comments and docs name,
// and nothing may point outside the repository.
//
// The rules, as the scan applies them:
//  - Files scanned: below the source tree, every .cpp, .h, .sh, .py, .yaml,
//    .yml, .md, .cmake file, every CMakeLists.txt and every file starting
//    with "#!" (.ci/run), except in folders named build* or starting with a
//    dot other than .ci, and the input corpora (kSkippedFolders: fuzz seeds
//    and the bad-input cases are data a parser is fed, not prose).
//  - In C++ files only comments are read (// and /* */): a string literal
//    naming a job file in a test is data, not a reference. Every other
//    file is read whole.
//  - A path is a token starting with one of the top folders (kTopFolders,
//    e.g. harness/, docs/, tests/) that is not preceded by a letter, digit,
//    '_', '.', '/', '-' or '$' (so /tmp/tests/x, ${dir}/ci/x, build/tests/x
//    and URLs are not paths of the tree) and runs on over letters, digits and
//    _ . - / * and one {a,b} group; a trailing '.' ends a sentence.
//  - A token with a placeholder is not checked: a run of capitals not
//    touching a lower-case letter (workloads/NAME.cpp, compare_X.cpp); so is
//    anything cut at a '<' (tests/<label>/*.cpp leaves tests/, which exists).
//  - {h,cpp} expands to one path per alternative; '*' matches within one
//    folder level (fnmatch); a token without an extension also names an
//    existing file of that name plus one (bench/compare_bench is the program
//    built from bench/compare_bench.cpp).
//  - Anywhere in a scanned file, code included, the name of the design
//    notes or the folder of reference material that lived outside the
//    repository is an error (kOutside).
// A second test plants a bad path in a small fake tree, so that the scan
// itself is seen to fail.
#include <fnmatch.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kTopFolders = {"harness/", "results/", "workloads/", "plots/",
                                              "tests/",   "docs/",    "ci/",        "bench/",
                                              "fuzz/",    "jobs/"};
const std::vector<std::string> kSkippedFolders = {"fuzz/corpus", "tests/fixtures/bad-input"};
/// Names outside the repository, spelt in pieces so that this file does not
/// name them itself.
const std::vector<std::string> kOutside = {std::string("shared") + "/",
                                           std::string("DESIGN") + ".md"};

bool is_cpp(const fs::path& p) {
  return p.extension() == ".cpp" || p.extension() == ".h";
}

bool scanned(const fs::path& p) {
  static const std::vector<std::string> exts = {".cpp",  ".h",   ".sh", ".py",
                                                ".yaml", ".yml", ".md", ".cmake"};
  const std::string ext = p.extension().string();
  for (const auto& e : exts)
    if (ext == e) return true;
  if (p.filename() == "CMakeLists.txt") return true;
  if (!ext.empty()) return false;
  std::ifstream in(p);
  char a = 0, b = 0;
  return in.get(a) && in.get(b) && a == '#' && b == '!';
}

/// Paths of every file and folder below `root`, relative to it, skipping
/// build output and hidden folders other than .ci.
std::vector<std::string> tree_entries(const fs::path& root) {
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.rfind("build", 0) == 0 || (name[0] == '.' && name != ".ci"))) {
      it.disable_recursion_pending();
      continue;
    }
    out.push_back(fs::relative(it->path(), root).string());
  }
  return out;
}

/// The comment text of each line of C++ source (code and string literals
/// blanked), so that line numbers stay those of the file.
std::vector<std::string> comment_lines(const std::string& text) {
  std::vector<std::string> out(1);
  bool block = false, line_comment = false, str = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i], next = i + 1 < text.size() ? text[i + 1] : 0;
    if (c == '\n') {
      out.emplace_back();
      line_comment = false;
      str = false;  // no literal runs over a line end but raw ones, which are data
      continue;
    }
    if (line_comment || block) {
      if (block && c == '*' && next == '/') {
        block = false;
        ++i;
        continue;
      }
      out.back() += c;
    } else if (str) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        str = false;
    } else if (c == '"' || c == '\'') {
      str = true;
      quote = c;
    } else if (c == '/' && next == '/') {
      line_comment = true;
      ++i;
    } else if (c == '/' && next == '*') {
      block = true;
      ++i;
    }
  }
  return out;
}

bool path_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
         c == '/' || c == '*';
}

/// The path tokens of one line (see the rules at the top).
std::vector<std::string> path_tokens(const std::string& line) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (i > 0) {
      const char p = line[i - 1];
      if (std::isalnum(static_cast<unsigned char>(p)) || p == '_' || p == '.' || p == '/' ||
          p == '-' || p == '$')
        continue;
    }
    bool top = false;
    for (const auto& t : kTopFolders) top = top || line.compare(i, t.size(), t) == 0;
    if (!top) continue;
    std::size_t j = i;
    bool braces = false;
    while (j < line.size()) {
      if (path_char(line[j])) {
        ++j;
      } else if (line[j] == '{' && !braces && line.find('}', j) != std::string::npos) {
        braces = true;
        j = line.find('}', j) + 1;
      } else {
        break;
      }
    }
    std::string token = line.substr(i, j - i);
    while (!token.empty() && token.back() == '.') token.pop_back();
    out.push_back(token);
    i = j;
  }
  return out;
}

/// True when `token` holds a placeholder: capitals not touching a lower-case letter.
bool has_placeholder(const std::string& token) {
  for (std::size_t i = 0; i < token.size();) {
    if (!std::isupper(static_cast<unsigned char>(token[i]))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < token.size() && std::isupper(static_cast<unsigned char>(token[j]))) ++j;
    const bool lower_before = i > 0 && std::islower(static_cast<unsigned char>(token[i - 1]));
    const bool lower_after = j < token.size() && std::islower(static_cast<unsigned char>(token[j]));
    if (!lower_before && !lower_after) return true;
    i = j;
  }
  return false;
}

/// `token` with its {a,b} group expanded.
std::vector<std::string> expand(const std::string& token) {
  const auto open = token.find('{'), close = token.find('}');
  if (open == std::string::npos || close == std::string::npos) return {token};
  std::vector<std::string> out;
  std::istringstream alts(token.substr(open + 1, close - open - 1));
  for (std::string alt; std::getline(alts, alt, ',');)
    out.push_back(token.substr(0, open) + alt + token.substr(close + 1));
  return out;
}

bool exists_in(const fs::path& root, const std::vector<std::string>& entries,
               const std::string& path) {
  if (path.find('*') != std::string::npos) {
    std::string pattern = path;
    if (pattern.back() == '/') pattern.pop_back();
    for (const auto& e : entries)
      if (fnmatch(pattern.c_str(), e.c_str(), FNM_PATHNAME) == 0) return true;
    return false;
  }
  if (fs::exists(root / path)) return true;
  const fs::path p(path);
  if (p.has_extension() || path.back() == '/' || !fs::is_directory(root / p.parent_path()))
    return false;
  for (const auto& e : fs::directory_iterator(root / p.parent_path()))
    if (e.path().stem() == p.filename()) return true;
  return false;
}

/// Every problem of the tree below `root`: "FILE:LINE: ..." lines.
std::vector<std::string> problems(const fs::path& root) {
  std::vector<std::string> out;
  const std::vector<std::string> entries = tree_entries(root);
  for (const auto& rel : entries) {
    bool skipped = false;
    for (const auto& s : kSkippedFolders) skipped = skipped || rel.rfind(s + "/", 0) == 0;
    const fs::path file = root / rel;
    if (skipped || !fs::is_regular_file(file) || !scanned(file)) continue;
    std::ifstream in(file);
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    std::vector<std::string> whole;
    for (std::string line; std::getline(buf, line);) whole.push_back(line);
    const std::vector<std::string> read = is_cpp(file) ? comment_lines(text) : whole;
    for (std::size_t n = 0; n < whole.size(); ++n) {
      const std::string where = rel + ":" + std::to_string(n + 1) + ": ";
      for (const auto& name : kOutside)
        if (whole[n].find(name) != std::string::npos)
          out.push_back(where + "names '" + name + "', which is not in the repository");
      if (n >= read.size()) continue;
      for (const auto& token : path_tokens(read[n])) {
        if (has_placeholder(token)) continue;
        for (const auto& path : expand(token))
          if (!exists_in(root, entries, path)) out.push_back(where + "no such path: " + path);
      }
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

TEST(Paths, EveryPathTheTreeNamesExistsAndNothingPointsOutside) {
  const auto found = problems(nightjar::test::source_path(""));
  EXPECT_TRUE(found.empty()) << found.size() << " problem(s):\n" << joined(found);
}

TEST(Paths, TokensPlaceholdersAndGlobsFollowTheRules) {
  EXPECT_EQ(path_tokens("see harness/job/job.h."), std::vector<std::string>{"harness/job/job.h"});
  EXPECT_EQ(path_tokens("/tmp/tests/x ${d}/ci/y build/tests/z a-docs/q"),
            std::vector<std::string>{});
  EXPECT_EQ(expand("plots/plot.{h,cpp}"),
            (std::vector<std::string>{"plots/plot.h", "plots/plot.cpp"}));
  EXPECT_TRUE(has_placeholder("workloads/NAME.cpp"));
  EXPECT_TRUE(has_placeholder("results/render/compare_X.cpp"));
  EXPECT_FALSE(has_placeholder("bench/CMakeLists.txt"));
  EXPECT_EQ(comment_lines("int a = f(\"docs/x.md\");  // docs/y.md\n/* tests/\nz */ b();"),
            (std::vector<std::string>{" docs/y.md", " tests/", "z "}));
}

TEST(Paths, APlantedBadPathAndAnOutsideReferenceAreCaught) {
  nightjar::test::TempDir tree;
  fs::create_directories(fs::path(tree.path()) / "docs");
  fs::create_directories(fs::path(tree.path()) / "harness/job");
  fs::create_directories(fs::path(tree.path()) / "bench");
  fs::create_directories(fs::path(tree.path()) / "tests");
  tree.write("harness/job/job.h", "// See docs/jobs.md and harness/job/gone.h.\n");
  tree.write("harness/job/job.cpp", "auto p = \"jobs/fx.yaml\";  // data, not a reference\n");
  tree.write("bench/compare_bench.cpp", "\n");
  tree.write("docs/jobs.md",
             "`harness/job/job.{h,cpp}`, `harness/job/*.h`, `bench/compare_bench`,\n"
             "`workloads/NAME.cpp`, `tests/<label>/*.cpp`, `/tmp/docs/x.md`\n"
             "As " +
                 kOutside[1] + " says.\n");
  const auto found = problems(tree.path());
  ASSERT_EQ(found.size(), 2u) << joined(found);
  EXPECT_NE(joined(found).find("harness/job/job.h:1: no such path: harness/job/gone.h\n"),
            std::string::npos)
      << joined(found);
  EXPECT_NE(joined(found).find("docs/jobs.md:3: names '" + kOutside[1] + "'"), std::string::npos)
      << joined(found);
}

}  // namespace
