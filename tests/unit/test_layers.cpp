// Unit under test: the layering of the source tree. Every `#include "..."` of
// the non-test sources must point to a folder that the layer table of
// docs/architecture.md allows, and confined names (SQL, YAML nodes) must stay
// in their folder. A second test runs the same check on a small fake tree
// with an upward include, so that the check itself is seen to fail.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace {

namespace fs = std::filesystem;

/// The two tables of docs/architecture.md.
struct Rules {
  std::map<std::string, std::vector<std::string>> may_include;  ///< folder -> listed folders
  /// name -> the folders it may appear in (the table's cell, split at commas)
  std::vector<std::pair<std::string, std::vector<std::string>>> confined;
};

/// Cells of the markdown table rows between `<!-- NAME:begin -->` and
/// `<!-- NAME:end -->`, backquotes removed, header and rule rows skipped.
std::vector<std::vector<std::string>> table_rows(const std::string& text, const std::string& name) {
  const std::string begin = "<!-- " + name + ":begin -->", end = "<!-- " + name + ":end -->";
  const auto b = text.find(begin), e = text.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) return {};
  std::istringstream in(text.substr(b + begin.size(), e - b - begin.size()));
  std::vector<std::vector<std::string>> rows;
  std::string line;
  int seen = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '|') continue;
    if (++seen <= 2) continue;  // header, then |---|---|
    std::vector<std::string> cells;
    std::string cell;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '|') {
        cells.push_back(cell);
        cell.clear();
      } else if (line[i] != '`') {
        cell += line[i];
      }
    }
    for (auto& c : cells) {
      c.erase(0, c.find_first_not_of(' '));
      c.erase(c.find_last_not_of(' ') + 1);
    }
    rows.push_back(cells);
  }
  return rows;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

Rules read_rules(const std::string& architecture_md) {
  std::ifstream in(architecture_md);
  std::stringstream text;
  text << in.rdbuf();
  Rules r;
  for (const auto& row : table_rows(text.str(), "layers"))
    if (!row.empty())
      r.may_include[row[0]] = row.size() > 1 ? split_list(row[1]) : std::vector<std::string>{};
  for (const auto& row : table_rows(text.str(), "confined"))
    if (row.size() >= 2) {
      std::vector<std::string> folders;
      std::istringstream cell(row[1]);
      for (std::string f; std::getline(cell, f, ',');) {
        f.erase(0, f.find_first_not_of(' '));
        f.erase(f.find_last_not_of(' ') + 1);
        if (!f.empty()) folders.push_back(f);
      }
      r.confined.emplace_back(row[0], folders);
    }
  return r;
}

/// The listed folder holding `path` (relative to the tree): the longest one.
std::string folder_of(const Rules& r, const std::string& path) {
  std::string best;
  for (const auto& [folder, _] : r.may_include)
    if (path.rfind(folder + "/", 0) == 0 && folder.size() > best.size()) best = folder;
  return best;
}

std::set<std::string> allowed(const Rules& r, const std::string& folder) {
  std::set<std::string> out{folder};
  std::vector<std::string> todo{folder};
  while (!todo.empty()) {
    std::string f = todo.back();
    todo.pop_back();
    auto it = r.may_include.find(f);
    if (it == r.may_include.end()) continue;
    for (const auto& g : it->second)
      if (out.insert(g).second) todo.push_back(g);
  }
  return out;
}

/// Every violation in the sources below `root`: "FILE:LINE: ..." lines.
std::vector<std::string> violations(const fs::path& root, const Rules& rules) {
  std::vector<std::string> out;
  const std::regex include_re(R"re(^\s*#\s*include\s*"([^"]+)")re");
  for (const char* top : {"harness", "workloads", "results", "plots"}) {
    if (!fs::exists(root / top)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
      const std::string rel = fs::relative(entry.path(), root).string();
      const std::string folder = folder_of(rules, rel);
      if (folder.empty()) {
        out.push_back(rel + ": in no folder of the layer table (docs/architecture.md)");
        continue;
      }
      const std::set<std::string> ok = allowed(rules, folder);
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (std::regex_search(line, m, include_re)) {
          const std::string target = folder_of(rules, m[1].str());
          if (!target.empty() && !ok.count(target))
            out.push_back(rel + ":" + std::to_string(n) + ": " + folder + " includes " +
                          m[1].str() + " (" + target + "), which the layer table does not allow");
        }
        for (const auto& [name, only] : rules.confined) {
          if (line.find(name) == std::string::npos) continue;
          bool inside = false;
          for (const auto& f : only)
            inside = inside || folder == f || folder.rfind(f + "/", 0) == 0;
          if (!inside) {
            std::string list;
            for (const auto& f : only) list += (list.empty() ? "" : ", ") + f;
            out.push_back(rel + ":" + std::to_string(n) + ": '" + name + "' outside " + list);
          }
        }
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

TEST(Layers, EveryIncludeOfTheSourcesFollowsTheLayerTable) {
  const Rules rules = read_rules(nightjar::test::source_path("docs/architecture.md"));
  ASSERT_GE(rules.may_include.size(), 10u) << "no layer table in docs/architecture.md";
  ASSERT_GE(rules.confined.size(), 2u) << "no confined-name table in docs/architecture.md";
  const auto found = violations(nightjar::test::source_path(""), rules);
  EXPECT_TRUE(found.empty()) << found.size() << " violation(s):\n" << joined(found);
}

TEST(Layers, AnUpwardIncludeAndSqlOutsideTheStoreAreCaught) {
  const Rules rules = read_rules(nightjar::test::source_path("docs/architecture.md"));
  nightjar::test::TempDir tree;
  fs::create_directories(fs::path(tree.path()) / "results/model");
  fs::create_directories(fs::path(tree.path()) / "harness/cli");
  tree.write("results/model/a.h", "#include \"results/model/b.h\"\n#include \"harness/cli/c.h\"\n");
  tree.write("results/model/b.h", "SQLite::Statement q;\n");
  tree.write("harness/cli/c.h", "#include \"results/model/b.h\"\n");
  fs::create_directories(fs::path(tree.path()) / "harness/lava");
  tree.write("harness/lava/d.h", "YAML::Node lava_job;\n");  // allowed: the second folder
  tree.write("harness/cli/e.h", "YAML::Node n;\n");
  tree.write("harness/stray.h", "\n");
  const auto found = violations(tree.path(), rules);
  ASSERT_EQ(found.size(), 4u) << joined(found);
  EXPECT_NE(joined(found).find("results/model/a.h:2: results/model includes harness/cli/c.h"),
            std::string::npos)
      << joined(found);
  EXPECT_NE(joined(found).find("results/model/b.h:1: 'SQLite::' outside results/store"),
            std::string::npos);
  EXPECT_NE(joined(found).find("harness/stray.h: in no folder"), std::string::npos);
  EXPECT_NE(joined(found).find("harness/cli/e.h:1: 'YAML::Node' outside harness/job, harness/lava"),
            std::string::npos)
      << joined(found);
}

}  // namespace
