// Unit under test: `nightjar plot` end to end (issue 6, check 4): on a fixture
// database written through the results store (pft cells clients=1,2,4,8 of
// variants vanilla and patched; a nightly history of 12 builds whose level
// drops 10% at n07), the real binary writes a valid PNG (signature, IHDR
// width and height, IEND) and SVG (an <svg width height> root element, tags
// balanced); the history marks the change point; without gnuplot it exits 4
// naming the package; bad flags, metrics and axes exit 2 listing what exists;
// a failing gnuplot leaves the old file and no temporary file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <random>
#include <regex>

#include <fmt/format.h>

#include "harness/cli/gnuplot_run.h"
#include "plots/gnuplot.h"
#include "results/store/store.h"
#include "test_support.h"

using namespace nightjar::test;

namespace {

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

std::uint32_t be32(const std::string& s, std::size_t at) {
  return (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at])) << 24) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

// Checks a PNG file: signature, IHDR first with the given size, IEND last.
void expect_png(const std::string& path, std::uint32_t width, std::uint32_t height) {
  const std::string png = read_file(path);
  ASSERT_GT(png.size(), 33u) << path;
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << "PNG signature";
  EXPECT_EQ(be32(png, 8), 13u) << "IHDR length";
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(be32(png, 16), width) << "IHDR width";
  EXPECT_EQ(be32(png, 20), height) << "IHDR height";
  EXPECT_EQ(png.substr(png.size() - 8, 4), "IEND");
}

// Checks an SVG file: an XML declaration, the root element <svg ...> with the
// given width and height, every element closed in order, nothing after </svg>.
void expect_svg(const std::string& path, int width, int height) {
  const std::string svg = read_file(path);
  ASSERT_FALSE(svg.empty()) << path;
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u) << "XML declaration first";
  std::vector<std::string> open;
  std::string root, root_tag;
  std::size_t pos = 0, last_close = 0;
  while ((pos = svg.find('<', pos)) != std::string::npos) {
    if (svg.compare(pos, 4, "<!--") == 0) {
      pos = svg.find("-->", pos);
      ASSERT_NE(pos, std::string::npos) << "unclosed comment";
      continue;
    }
    if (svg.compare(pos, 9, "<![CDATA[") == 0) {
      pos = svg.find("]]>", pos);
      ASSERT_NE(pos, std::string::npos) << "unclosed CDATA";
      continue;
    }
    std::size_t end = svg.find('>', pos);
    ASSERT_NE(end, std::string::npos) << "unclosed tag at " << pos;
    std::string tag = svg.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    if (tag.empty() || tag[0] == '?' || tag[0] == '!') continue;
    if (tag[0] == '/') {
      std::string name = tag.substr(1);
      name = name.substr(0, name.find_first_of(" \t\r\n"));
      ASSERT_FALSE(open.empty()) << "</" << name << "> closes nothing";
      ASSERT_EQ(open.back(), name) << "mismatched </" << name << ">";
      open.pop_back();
      last_close = end;
      continue;
    }
    std::string name = tag.substr(0, tag.find_first_of(" \t\r\n/"));
    if (root.empty()) {
      root = name;
      root_tag = tag;
    } else {
      ASSERT_FALSE(open.empty()) << "a second root element <" << name << ">";
    }
    if (tag.back() != '/') open.push_back(name);
  }
  EXPECT_EQ(root, "svg");
  EXPECT_TRUE(open.empty()) << "unclosed <" << (open.empty() ? "" : open.back()) << ">";
  EXPECT_EQ(svg.find_first_not_of(" \t\r\n", last_close + 1), std::string::npos)
      << "text after </svg>";
  std::smatch m;
  ASSERT_TRUE(std::regex_search(root_tag, m, std::regex(R"(width="(\d+)\"[\s\S]*height="(\d+)\")")))
      << root_tag;
  EXPECT_EQ(std::stoi(m[1]), width);
  EXPECT_EQ(std::stoi(m[2]), height);
}

// The fixture database (built once): scaling runs and a nightly history.
class PlotCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    db_ = dir_->path() + "/results.db";
    nightjar::ResultsStore store(db_);
    store.register_metrics("pft",
                           {{"faults_per_sec", "faults/sec", nightjar::Direction::higher_is_better,
                             nightjar::MeanKind::harmonic, ""},
                            {"elapsed", "s", nightjar::Direction::lower_is_better,
                             nightjar::MeanKind::arithmetic, ""}});
    std::mt19937_64 rng(11);
    std::normal_distribution<double> z(0, 1);
    auto add = [&](const std::string& job, const std::string& variant, const std::string& build,
                   int clients, double level, const std::string& date) {
      nightjar::NewRun r;
      r.job = job;
      r.cell.workload = "pft";
      r.cell.params["clients"] = {std::to_string(clients), double(clients)};
      r.cell.params["mode"] = {"threads", 0};
      r.cell.params["size"] = {"256M", 268435456.0};
      r.variant = variant;
      r.build = build;
      r.iterations = 5;
      r.kernel.release = "6.1.0-test";
      r.testbox.hostname = "box";
      r.testbox.cpu_model = "test cpu";
      r.testbox.cpus = 2;
      std::int64_t id = store.begin_run(r);
      for (int i = 1; i <= 5; ++i) {
        nightjar::IterationResult it;
        double v = level * (1 + 0.02 * z(rng));
        it.metrics["faults_per_sec"] = v;
        it.metrics["elapsed"] = 268435456.0 / 4096 / v;
        store.add_iteration(id, i, it, {}, 0.1);
      }
      store.finish_run(id, nightjar::RunStatus::complete);
      if (!date.empty())
        exec_sql(store.path(), fmt::format("UPDATE run SET started_at='{}' WHERE id={}", date, id));
    };
    // Scaling: vanilla flattens out above 2 clients, patched keeps scaling.
    for (int c : {1, 2, 4, 8}) {
      add("pft", "vanilla", "v6.18", c, 400000.0 * std::min(c, 2) * (c > 2 ? 1.1 : 1), "");
      add("pft", "patched", "v6.18+fix", c, 400000.0 * c * (c > 2 ? 0.9 : 1), "");
    }
    // History: nights n01..n12, 10% lower from n07 on.
    for (int n = 1; n <= 12; ++n)
      add("nightly", "vanilla", fmt::format("n{:02d}", n), 2, n < 7 ? 800000 : 720000,
          fmt::format("2026-01-{:02d}T03:00:00Z", n));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    try {
      nightjar::find_gnuplot();
    } catch (const std::exception& e) {
      gnuplot_missing_ = e.what();
    }
  }

  static CommandResult plot(std::vector<std::string> args,
                            const std::map<std::string, std::string>& env = {}) {
    args.insert(args.begin(), {"plot", "--db", db_});
    return run_nightjar(args, env);
  }
  std::vector<std::string> files(const std::string& d) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(d))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  static TempDir* dir_;
  static std::string db_;
  std::string gnuplot_missing_;
  TempDir out_;
};
TempDir* PlotCli::dir_ = nullptr;
std::string PlotCli::db_;

#define REQUIRE_GNUPLOT() \
  if (!gnuplot_missing_.empty()) GTEST_SKIP() << "needs gnuplot: " << gnuplot_missing_

TEST_F(PlotCli, ScalingPlotWritesValidPngAndSvg) {
  REQUIRE_GNUPLOT();
  const std::string png = out_.path() + "/scaling.png";
  auto r = plot({"vanilla", "patched", "--job", "pft", "--x", "clients", "--metric",
                 "faults_per_sec", "-o", png});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + png +
                       " (PNG 800x600): scaling plot of faults_per_sec, 2 line(s), 8 point(s)\n");
  expect_png(png, 800, 600);

  const std::string svg = out_.path() + "/scaling.svg";
  auto s = plot({"vanilla", "patched", "--job", "pft", "--x", "clients", "--metric",
                 "faults_per_sec", "-o", svg, "--log-x", "--error-bars", "minmax"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  expect_svg(svg, 800, 600);
  const std::string text = read_file(svg);
  EXPECT_TRUE(contains(text, "pft: faults_per_sec by clients")) << text;
  EXPECT_TRUE(contains(text, "Hmean faults_per_sec (faults/sec)"));
  EXPECT_TRUE(contains(text, "job pft, kernel 6.1.0-test, testbox box"));
  EXPECT_TRUE(contains(text, "clients (workers)"));
  EXPECT_TRUE(contains(text, "error bars: min to max of the samples; n = 5 per point"));

  // --size sets the PNG's IHDR; the extension's case does not matter.
  const std::string big = out_.path() + "/big.PNG";
  auto b = plot(
      {"--job", "pft", "--x", "clients", "--metric", "elapsed", "-o", big, "--size", "1024x768"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  expect_png(big, 1024, 768);
  EXPECT_EQ(files(out_.path()),
            (std::vector<std::string>{"big.PNG", "scaling.png", "scaling.svg"}));
}

TEST_F(PlotCli, HistoryPlotMarksTheChangePoint) {
  REQUIRE_GNUPLOT();
  const std::string png = out_.path() + "/history.png";
  auto r = plot({"--job", "nightly", "--x", "build", "--metric", "faults_per_sec", "-o", png,
                 "--mark-changes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + png +
                       " (PNG 800x600): history plot of faults_per_sec, 1 line(s), 12 point(s), "
                       "1 change point(s)\n");
  expect_png(png, 800, 600);
  // The same change point as `nightjar trend`.
  auto t = run_nightjar({"trend", "--db", db_, "--job", "nightly", "--metric", "faults_per_sec"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_TRUE(contains(t.out, "1 change point(s)")) << t.out;
  EXPECT_TRUE(contains(t.out, "n07")) << t.out;

  const std::string svg = out_.path() + "/history.svg";
  auto s = plot({"vanilla", "--job", "nightly", "--x", "date", "--metric", "faults_per_sec", "-o",
                 svg, "--mark-changes"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  expect_svg(svg, 800, 600);
  EXPECT_TRUE(std::regex_search(read_file(svg), std::regex(R"(n07 -(9|10|11)\.\d%)")))
      << "the change point's label";
}

TEST_F(PlotCli, WithoutGnuplotExitsFourNamingThePackage) {
  const std::string png = out_.path() + "/none.png";
  auto r = plot({"--x", "clients", "--metric", "faults_per_sec", "-o", png},
                {{"PATH", out_.path() + "/empty-bin"}});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "gnuplot is not installed")) << r.err;
  EXPECT_TRUE(contains(r.err, "install the package gnuplot-nox")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(png));
  auto named = plot({"--x", "clients", "--metric", "faults_per_sec", "-o", png, "--gnuplot",
                     out_.path() + "/gnuplot"});
  EXPECT_EQ(named.exit_code, 4) << named.err;
  EXPECT_TRUE(contains(named.err, "gnuplot-nox")) << named.err;
}

TEST_F(PlotCli, UsageErrorsExitTwoAndListWhatExists) {
  // Errors in the data come after the gnuplot check: name any program so
  // that the test also runs where gnuplot is missing (nothing is drawn).
  auto plot = [](std::vector<std::string> args) {
    args.insert(args.end(), {"--gnuplot", "/bin/sh"});
    return PlotCli::plot(args);
  };
  const std::string png = out_.path() + "/u.png";
  auto pdf = plot({"--x", "clients", "--metric", "faults_per_sec", "-o", out_.path() + "/u.pdf"});
  EXPECT_EQ(pdf.exit_code, 2);
  EXPECT_TRUE(contains(pdf.err, "write a file name ending in .png or .svg")) << pdf.err;
  auto no_o = plot({"--x", "clients", "--metric", "faults_per_sec"});
  EXPECT_EQ(no_o.exit_code, 2);
  EXPECT_TRUE(contains(no_o.err, "plot: -o is required")) << no_o.err;
  auto metric = plot({"--job", "pft", "--x", "clients", "--metric", "faults", "-o", png});
  EXPECT_EQ(metric.exit_code, 2);
  EXPECT_TRUE(contains(metric.err,
                       "plot: --metric faults: no plotted cell has samples of 'faults'; the "
                       "plotted runs hold metrics faults_per_sec, elapsed"))
      << metric.err;
  auto axis = plot({"--job", "pft", "--x", "threads", "--metric", "faults_per_sec", "-o", png});
  EXPECT_EQ(axis.exit_code, 2);
  EXPECT_TRUE(contains(axis.err,
                       "their parameters are clients (1, 2, 4, 8), mode (threads), size (256M); "
                       "or write --x build or --x date for a history"))
      << axis.err;
  auto no_x = plot({"--job", "pft", "--metric", "faults_per_sec", "-o", png});
  EXPECT_EQ(no_x.exit_code, 2);
  EXPECT_TRUE(contains(no_x.err, "plot: --x is required")) << no_x.err;
  auto side = plot({"vanila", "--x", "clients", "--metric", "faults_per_sec", "-o", png});
  EXPECT_EQ(side.exit_code, 2);
  EXPECT_TRUE(contains(side.err,
                       "plot selector 'vanila' matched no runs; the database holds "
                       "variants patched, vanilla"))
      << side.err;
  auto size = plot({"--x", "clients", "--metric", "faults_per_sec", "-o", png, "--size", "big"});
  EXPECT_EQ(size.exit_code, 2);
  auto bars =
      plot({"--x", "clients", "--metric", "faults_per_sec", "-o", png, "--error-bars", "sd"});
  EXPECT_EQ(bars.exit_code, 2);
  auto dir = plot({"--x", "clients", "--metric", "faults_per_sec", "-o", "/nonexistent/d/u.png"});
  EXPECT_EQ(dir.exit_code, 2);
  EXPECT_TRUE(contains(dir.err, "the directory /nonexistent/d does not exist")) << dir.err;
  // --title and --label follow the one label rule (docs/input.md "Labels").
  auto title =
      plot({"--x", "clients", "--metric", "faults_per_sec", "-o", png, "--title", "a\x1b[31mred"});
  EXPECT_EQ(title.exit_code, 2);
  EXPECT_TRUE(contains(title.err, "--title")) << title.err;
  EXPECT_TRUE(contains(title.err, "control character")) << title.err;
  EXPECT_FALSE(contains(title.err, "\x1b")) << "echoed unescaped: " << title.err;
  auto label =
      plot({"--x", "clients", "--metric", "faults_per_sec", "-o", png, "--label", "two\nlines"});
  EXPECT_EQ(label.exit_code, 2);
  EXPECT_TRUE(contains(label.err, "--label")) << label.err;
  EXPECT_TRUE(contains(label.err, "control character")) << label.err;
  auto nodb = run_nightjar({"plot", "--db", out_.path() + "/none.db", "--x", "clients", "--metric",
                            "faults_per_sec", "-o", png, "--gnuplot", "/bin/sh"});
  EXPECT_EQ(nodb.exit_code, 2);  // a missing database: the path names nothing (issue 15)
  EXPECT_FALSE(std::filesystem::exists(out_.path() + "/none.db"));
  EXPECT_FALSE(std::filesystem::exists(png));
}

TEST_F(PlotCli, FailingGnuplotLeavesTheOldFileAndNoTemporaryFile) {
  const std::string png = out_.path() + "/keep.png";
  out_.write("keep.png", "the previous figure");
  const std::string fake = out_.write(
      "bin/gnuplot",
      "#!/bin/sh\nwhile read -r line; do :; done\necho 'gnuplot: out of ink' >&2\nexit 1\n");
  ::chmod(fake.c_str(), 0755);
  auto r = plot({"--x", "clients", "--metric", "faults_per_sec", "-o", png},
                {{"PATH", out_.path() + "/bin"}});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "exited with 1")) << r.err;
  EXPECT_TRUE(contains(r.err, "gnuplot: out of ink")) << r.err;
  EXPECT_EQ(read_file(png), "the previous figure");
  EXPECT_EQ(files(out_.path()), (std::vector<std::string>{"bin", "keep.png"}));
}

}  // namespace
