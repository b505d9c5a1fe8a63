// Unit under test: `nightjar publish` end to end on a nightly history
// (tests/publish_fixture.h: three exec cells, one with a planted -10% step):
// the index and a page per cell exist, hold the cells, the builds table's
// n / mean / CoeffVar / invalid values as `nightjar trend` computes them, the
// planted change point on the right cell only, worst regression first; and
// `<script>`, quotes and unicode in cell ids and labels come out escaped.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "bisect_repo.h"
#include "publish_fixture.h"
#include "test_support.h"

using namespace nightjar::test;

namespace {

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The (page, escaped cell text) links of the index, in row order.
std::vector<std::pair<std::string, std::string>> cell_links(const std::string& index) {
  static const std::regex link(
      R"re(<td class="cell-id"><a href="(cells/[0-9a-f]{16}\.html)">([^<]*)</a>)re");
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = std::sregex_iterator(index.begin(), index.end(), link);
       it != std::sregex_iterator(); ++it)
    out.emplace_back((*it)[1], (*it)[2]);
  return out;
}

class PublishCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    history_ = new PublishHistory;
    history_->record();
  }
  static void TearDownTestSuite() {
    delete history_;
    history_ = nullptr;
  }
  static PublishHistory* history_;
};
PublishHistory* PublishCli::history_ = nullptr;

TEST_F(PublishCli, WritesIndexAndCellPagesWithTheTrendNumbers) {
  ASSERT_FALSE(HasFatalFailure());
  TempDir out;
  std::string site = out.path() + "/site";
  auto r = run_nightjar({"publish", "--db", history_->db, "-o", site});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "published 3 cell(s) of 1 job(s)")) << r.err;
  std::string index = read_file(site + "/index.html");
  ASSERT_FALSE(index.empty());
  EXPECT_TRUE(contains(index, "<dd class=\"database\">" + history_->db + "</dd>")) << index;
  auto links = cell_links(index);
  ASSERT_EQ(links.size(), 3u) << index;
  // Worst regression first: the stepped cell.
  EXPECT_TRUE(contains(links[0].second, " down ")) << links[0].second;
  EXPECT_EQ(count(index, "class=\"nightjar-figure small\""), 3u);
  EXPECT_EQ(
      count(index, "<td class=\"status regression\">regression since " + night_label(kStepNight)),
      1u)
      << index;

  auto trend = run_nightjar({"trend", "--job", "nightly", "--metric", "throughput", "--db",
                             history_->db, "--format", "json"});
  ASSERT_EQ(trend.exit_code, 0) << trend.err;
  auto doc = nlohmann::json::parse(trend.out);
  for (const auto& [page, cell] : links) {
    std::string html = read_file(site + "/" + page);
    ASSERT_FALSE(html.empty()) << page;
    EXPECT_EQ(count(html, "<tr class=\"build-row\">"), static_cast<std::size_t>(kNights)) << page;
    EXPECT_EQ(count(html, "class=\"sample\""), static_cast<std::size_t>(kNights) * 3) << page;
    EXPECT_TRUE(contains(html, "<a href=\"../index.html\">")) << page;
    bool stepped = contains(cell, " down ");
    // The planted step is a change point of the stepped cell only.
    EXPECT_EQ(count(html, "<tr class=\"change-row\"><td>" + night_label(kStepNight) + "</td>"),
              stepped ? 1u : 0u)
        << page;
    EXPECT_EQ(count(html, "class=\"change-point\""), stepped ? 1u : 0u) << page;
    EXPECT_EQ(contains(html, "<p class=\"no-changes\">"), !stepped) << page;
    // The builds table holds trend's n, CoeffVar and invalid counts.
    for (const auto& s : doc["series"]) {
      std::string id = s["cell"];
      if (contains(cell, " down ") != contains(id, " down ") ||
          contains(cell, " uni ") != contains(id, " uni "))
        continue;
      const auto& first = s["points"][0];
      EXPECT_EQ(first["n"], 3);
      char cv[32];
      std::snprintf(cv, sizeof cv, "%.2f%%", first["coeff_var"].get<double>());
      EXPECT_TRUE(contains(html, "<td class=\"num\">3</td>")) << page;
      EXPECT_TRUE(contains(html, std::string("<td class=\"num\">") + cv + "</td>"))
          << page << " " << cv;
      EXPECT_TRUE(contains(html, "<td class=\"num\">0</td></tr>") ||
                  contains(html, "<td class=\"num\">0</td><td>"))
          << page;
    }
  }
}

TEST_F(PublishCli, EscapesScriptQuotesAndKeepsUnicode) {
  ASSERT_FALSE(HasFatalFailure());
  TempDir out;
  std::string site = out.path() + "/s";
  auto r = run_nightjar({"publish", "--db", history_->db, "-o", site});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string index = read_file(site + "/index.html");
  // The only script element is the filter script of the page itself.
  EXPECT_EQ(count(index, "<script"), 1u) << index;
  EXPECT_FALSE(contains(index, "alert(\"x\")"));
  EXPECT_TRUE(contains(index, "&apos;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&apos;"))
      << index;
  EXPECT_TRUE(contains(index, kUnicodeArg)) << "unicode is written as UTF-8, unescaped";
  for (const auto& [page, cell] : cell_links(index)) {
    std::string html = read_file(site + "/" + page);
    EXPECT_EQ(count(html, "<script"), 0u) << page;
    EXPECT_FALSE(contains(html, "<b>\"v\"</b>")) << page;
    EXPECT_TRUE(contains(html, "data-label=\"&lt;b&gt;&quot;v&quot;&lt;/b&gt;\xc3\xbc")) << page;
  }
}

// The job's latest comparison (newest night against the last good one, the
// night before the step) has a page with compare's verdicts, row by row.
TEST_F(PublishCli, ComparisonPagesHoldCompareVerdicts) {
  ASSERT_FALSE(HasFatalFailure());
  TempDir out;
  std::string site = out.path() + "/site";
  auto r = run_nightjar(
      {"publish", "--db", history_->db, "-o", site, "--compare", "build=night01 build=night14"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "2 comparison(s) and 0 bisect session(s)")) << r.err;
  std::string index = read_file(site + "/index.html");
  const std::string base = "build=" + night_label(kStepNight - 1),
                    now = "build=" + night_label(kNights);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      index, m, std::regex("<li><a href=\"(compare/[0-9a-f]{16}\\.html)\">" + base + " vs " + now)))
      << index;
  std::string page = read_file(site + "/" + m[1].str());
  auto cmp = run_nightjar(
      {"compare", base, now, "--job", "nightly", "--db", history_->db, "--format", "json"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  auto doc = nlohmann::json::parse(cmp.out);
  EXPECT_TRUE(contains(page, "<p class=\"verdict-line\"><strong>" +
                                 doc["verdict"].get<std::string>() + "</strong></p>"))
      << page;
  // Row by row, in compare's order: the same verdicts.
  static const std::regex row_verdict(
      R"re(<tr class="compare-row">.*<td class="([a-z]+)" title=)re");
  std::vector<std::string> verdicts;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), row_verdict);
       it != std::sregex_iterator(); ++it)
    verdicts.push_back((*it)[1]);
  std::vector<std::string> expected;
  for (const auto& row : doc["rows"])
    if (row["kind"] == "metric") expected.push_back(row["changes"][0]["verdict"]);
  EXPECT_EQ(verdicts, expected);
  EXPECT_EQ(count(page, "<tr class=\"compare-row\">"), 3u);
  EXPECT_TRUE(contains(page, "<pre class=\"mmtests\">")) << page;
  EXPECT_EQ(count(page, "<script"), 0u) << "cell ids in the mmtests text are escaped too";
  EXPECT_TRUE(contains(page, "&lt;script&gt;alert(&quot;x&quot;)")) << page;
  // Each cell row of the index links its latest verdict to that page, and
  // each cell page lists both comparisons.
  EXPECT_EQ(count(index, "<a href=\"" + m[1].str() + "\">"), 3u + 1);
  for (const auto& [cell_page, cell] : cell_links(index)) {
    std::string html = read_file(site + "/" + cell_page);
    EXPECT_EQ(count(html, "<li><a href=\"../compare/"), 2u) << cell_page;
  }
}

TEST_F(PublishCli, SelectorsNarrowTheCells) {
  ASSERT_FALSE(HasFatalFailure());
  TempDir out;
  auto r = run_nightjar({"publish", "--db", history_->db, "-o", out.path() + "/s", "job=nightly"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto none = run_nightjar({"publish", "--db", history_->db, "-o", out.path() + "/t", "job=nope"});
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_FALSE(std::filesystem::exists(out.path() + "/t/index.html"));
  auto bad = run_nightjar({"publish", "--db", history_->db, "-o", out.path() + "/u", "a=b"});
  EXPECT_EQ(bad.exit_code, 2);
  auto no_out = run_nightjar({"publish", "--db", history_->db});
  EXPECT_EQ(no_out.exit_code, 2);
  auto one_side = run_nightjar(
      {"publish", "--db", history_->db, "-o", out.path() + "/w", "--compare", "build=night01"});
  EXPECT_EQ(one_side.exit_code, 2);
  EXPECT_TRUE(contains(one_side.err, "--compare 'build=night01'")) << one_side.err;
  auto no_db = run_nightjar({"publish", "--db", out.path() + "/none.db", "-o", out.path() + "/v"});
  EXPECT_EQ(no_db.exit_code, 2) << no_db.err;
}

// A bisect session (tests/bisect_repo.h: 12 commits, +10% runtime from
// commit 8) published with its steps, its first bad commit and that commit's
// comparison against the good one.
TEST(PublishBisectCli, BisectSessionPageHoldsStepsAndFirstBadCommit) {
  TempDir d;
  std::string work = d.path() + "/repo";
  std::filesystem::create_directories(work);
  SyntheticRepoSpec spec;
  spec.commits = 12;
  spec.regress_at = 8;
  SyntheticRepo repo = make_synthetic_repo(work, spec);
  std::string job = d.write("job.yaml", synthetic_job(d.path() + "/counter", 7, 5));
  std::string db = d.path() + "/r.db";
  auto b =
      run_nightjar({"bisect", "run", "--repo", work, "--good", repo.commits.front(), "--bad",
                    repo.commits.back(), "--build", kSyntheticBuild, "--job", job, "--db", db});
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  const std::string& first_bad = repo.commits[8];
  ASSERT_TRUE(contains(b.out, "first bad commit: " + first_bad)) << b.out;
  std::string site = d.path() + "/site";
  auto r = run_nightjar({"publish", "--db", db, "-o", site});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "and 1 bisect session(s)")) << r.err;
  std::string index = read_file(site + "/index.html");
  EXPECT_TRUE(contains(index, "<a href=\"bisect/1.html\">bisect session 1</a>")) << index;
  EXPECT_TRUE(contains(index, "found, first bad commit " + first_bad)) << index;
  std::string page = read_file(site + "/bisect/1.html");
  EXPECT_TRUE(contains(page, "<dd class=\"first-bad\">" + first_bad + "</dd>")) << page;
  EXPECT_TRUE(contains(page, "<dd class=\"bisect-status\">found</dd>")) << page;
  // One row per stored step, the first bad commit's marked and decided bad.
  auto steps = query_one(db, "SELECT count(*) FROM bisect_step");
  EXPECT_EQ(count(page, "<tr class=\"bisect-step"), std::stoul(steps)) << page;
  EXPECT_EQ(count(page, "<tr class=\"bisect-step first-bad\">"), 1u) << page;
  EXPECT_TRUE(contains(page, "<code>" + first_bad + "</code>")) << page;
  // The table of the first bad commit: a comparison page with compare's verdict.
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(page, m, std::regex("<a href=\"\\.\\./(compare/[0-9a-f]{16}\\.html)\">")))
      << page;
  std::string table = read_file(site + "/" + m[1].str());
  auto cmp = run_nightjar({"compare", "build=" + repo.commits.front(), "build=" + first_bad,
                           "--job", "job", "--db", db, "--format", "json"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  auto doc = nlohmann::json::parse(cmp.out);
  EXPECT_TRUE(contains(table, "<strong>" + doc["verdict"].get<std::string>() + "</strong>"))
      << table;
  // One run per commit and too few alike runs for a history: compare tests
  // the +10% against the conservative prior and leaves it open, while bisect
  // decided it by its own rule (docs/bisect.md "Deciding a commit").
  EXPECT_TRUE(contains(doc["verdict"].get<std::string>(), "1 inconclusive")) << cmp.out;
  EXPECT_TRUE(contains(table, "conservative prior")) << table;
  EXPECT_TRUE(contains(page, "<pre class=\"bisect-log\">bisect session 1 (run): found")) << page;
}

}  // namespace
