// Unit under test: the site `nightjar publish` writes, as a real browser
// renders it (ctest label `browser`; docs/publish.md "The browser test"). A
// fixture history (tests/publish_fixture.h: three cells, a planted -10% step
// on one) is published and opened from file:// in Debian's headless Chromium
// (installed by ci/install-browser.sh), started through the process toolkit
// (workloads/sys/process.h run_command, with a timeout that kills its
// process group):
//  - `--dump-dom` of the index and of the stepped cell's page: the rows, the
//    verdicts, the figures and their change-point marker are in the DOM that
//    Chromium built, and `<script>`/quotes of the cell ids are text;
//  - the index's width: a copy of it whose last script writes
//    document.documentElement.scrollWidth into the DOM (read back with
//    `--dump-dom`) fits the 1280-pixel window, although every cell id holds
//    a 98-byte token without a blank (issue 20);
//  - `--screenshot` of both pages: a PNG of the window's size (decoded with
//    libpng) whose pixels of the figure's line colour show that the figure
//    is drawn;
//  - the differential flame graph page of `compare --why --flamegraph`
//    (tests/profile_fixture.h, docs/compare.md "The flame graph"): the SVG
//    that d3-flame-graph drew has a rectangle per frame, a red frame (more
//    in NEW) and a blue one (fewer), the legend names both sides, and the
//    screenshot shows both colours;
//  - a 16-night history with a fourth cell stepping +8% three nights before
//    the end (issue 36): the index, a cell page and the latest comparison's
//    page fit the window, and each index row's status states the same
//    direction as its latest verdict.
// Negative controls, the cell page with its figure removed and the index
// without its rule that lets cell ids wrap, must fail those checks, so that
// the checks can fail.
#include <gtest/gtest.h>
#include <png.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "profile_fixture.h"
#include "publish_fixture.h"
#include "test_support.h"
#include "workloads/sys/process.h"

using namespace nightjar::test;

namespace {

namespace fs = std::filesystem;

constexpr int kWidth = 1280, kHeight = 1000;

std::string chromium_path() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

// Runs headless Chromium on `url` with `mode` ("--dump-dom" or
// "--screenshot=PATH"); its stdout. Fails the test when it does not exit 0.
// `settle_ms` > 0 lets the page's timers run that long (virtual time) before
// the DOM or the screenshot is taken: d3's transitions set the flame
// graph's widths and labels on timers.
std::string chromium(const std::string& mode, const std::string& url, const std::string& dir,
                     int settle_ms = 0) {
  static int profile = 0;
  std::string profile_dir = dir + "/profile" + std::to_string(++profile);
  fs::create_directories(profile_dir);
  nightjar::CommandSpec spec;
  spec.argv = {chromium_path(),
               "--headless",
               "--no-sandbox",
               "--disable-gpu",
               "--disable-quic",
               "--no-first-run",
               "--disable-background-networking",
               "--disable-component-update",
               "--disable-sync",
               "--hide-scrollbars",
               "--user-data-dir=" + profile_dir,
               "--window-size=" + std::to_string(kWidth) + "," + std::to_string(kHeight),
               mode};
  if (settle_ms > 0) spec.argv.push_back("--virtual-time-budget=" + std::to_string(settle_ms));
  spec.argv.push_back(url);
  spec.timeout_sec = 90;
  nightjar::CommandResult r = nightjar::run_command(spec);
  EXPECT_TRUE(r.started) << r.error;
  EXPECT_FALSE(r.timed_out) << "chromium ran over 90 s";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A decoded PNG as 8-bit RGBA.
struct Image {
  std::uint32_t width = 0, height = 0;
  int channels = 4;
  std::vector<std::uint8_t> pixels;  // rows top to bottom, `channels` bytes a pixel
};

// Decodes `png` with libpng's simplified API (png.h "Simplified API",
// libpng 1.6), or says why not.
std::string decode_png(const std::string& png, Image& img) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, png.data(), png.size()))
    return std::string("not a PNG libpng reads: ") + image.message;
  image.format = PNG_FORMAT_RGBA;
  img.width = image.width;
  img.height = image.height;
  img.pixels.assign(PNG_IMAGE_SIZE(image), 0);
  if (!png_image_finish_read(&image, nullptr, img.pixels.data(), 0, nullptr))
    return std::string("PNG does not decode: ") + image.message;
  return "";
}

// Pixels within 24 per channel of `rgb`.
std::size_t pixels_near(const Image& img, std::uint32_t rgb) {
  const int r = rgb >> 16, g = (rgb >> 8) & 0xff, b = rgb & 0xff;
  std::size_t n = 0;
  for (std::size_t i = 0; i + 2 < img.pixels.size(); i += img.channels)
    if (std::abs(img.pixels[i] - r) < 24 && std::abs(img.pixels[i + 1] - g) < 24 &&
        std::abs(img.pixels[i + 2] - b) < 24)
      ++n;
  return n;
}

// Why the screenshot `png` does not show a drawn figure, or "": the window's
// size, and at least `min_line` pixels of the mean line's colour (#1f77b4,
// plots/svg.cpp; nothing else on the pages has it). The change markers are
// thin dashed lines, anti-aliased to lighter shades; the DOM checks find them.
std::string figure_problem(const std::string& png, std::size_t min_line) {
  Image img;
  if (auto why = decode_png(png, img); !why.empty()) return why;
  if (img.width != std::uint32_t(kWidth) || img.height != std::uint32_t(kHeight))
    return "screenshot is " + std::to_string(img.width) + "x" + std::to_string(img.height);
  std::size_t line = pixels_near(img, 0x1f77b4);
  if (line < min_line)
    return "figure not drawn: " + std::to_string(line) +
           " pixels of its line colour (want >= " + std::to_string(min_line) + ")";
  return "";
}

// The width of page `html` (written as `name` under `dir`) in the window:
// document.documentElement.scrollWidth, which a line of script appended to
// the page writes into the DOM that --dump-dom prints; -1 when missing.
int page_width(std::string html, const TempDir& dir, const std::string& name) {
  html.insert(html.rfind("</body>"),
              "<script>document.body.setAttribute('data-scroll-width', "
              "document.documentElement.scrollWidth);</script>\n");
  const std::string page = dir.write("site/" + name, html);
  const std::string dom = chromium("--dump-dom", "file://" + page, dir.path());
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex("data-scroll-width=\"([0-9]+)\""))) return -1;
  return std::stoi(m[1].str());
}

// What a page measures in the window: document.documentElement.scrollWidth
// and the right edge of the rightmost element matching a CSS selector (0:
// none), written into the DOM by a line of script appended to a copy of the
// page (`name`, under `dir`/site) and read back with `--dump-dom`; -1 when
// missing.
struct Measured {
  int scroll_width = -1, right = -1;
};

Measured measure(std::string html, const TempDir& dir, const std::string& name,
                 const std::string& selector) {
  html.insert(html.rfind("</body>"), "<script>var r = 0, e = document.querySelectorAll('" +
                                         selector +
                                         "');\nfor (var i = 0; i < e.length; i++) r = Math.max(r, "
                                         "e[i].getBoundingClientRect().right);\n"
                                         "document.body.setAttribute('data-right', Math.ceil(r));\n"
                                         "document.body.setAttribute('data-scroll-width', "
                                         "document.documentElement.scrollWidth);</script>\n");
  const std::string page = dir.write("site/" + name, html);
  const std::string dom = chromium("--dump-dom", "file://" + page, dir.path());
  Measured m;
  std::smatch w, r;
  if (std::regex_search(dom, w, std::regex("data-scroll-width=\"([0-9]+)\"")))
    m.scroll_width = std::stoi(w[1].str());
  if (std::regex_search(dom, r, std::regex("data-right=\"([0-9]+)\"")))
    m.right = std::stoi(r[1].str());
  return m;
}

// "regression", "improvement" or "none": the direction a status or verdict
// text states.
std::string direction(const std::string& text) {
  if (text.find("regression") != std::string::npos) return "regression";
  if (text.find("improvement") != std::string::npos) return "improvement";
  return "none";
}

// The rows of the index DOM whose status and latest verdict disagree, one
// line each; "" when they all agree. They disagree when their texts state
// different directions ("no change" beside "improvement (+7.81%)") or, for
// a row with a latest verdict, when the status's class is not the
// verdict's (the two are one decision). `rows` counts the rows read.
std::string disagreements(const std::string& dom, std::size_t& rows) {
  static const std::regex row(
      "<td class=\"status ([a-z]+)\">([^<]*)</td><td class=\"verdict ([a-z]*)\">(?:<a [^>]*>)?"
      "([^<]*)");
  std::string out;
  rows = 0;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), row); it != std::sregex_iterator();
       ++it, ++rows) {
    const auto& m = *it;
    if (direction(m[2]) != direction(m[4]) || (m[3].length() > 0 && m[1] != m[3]))
      out += "status " + m[1].str() + " \"" + m[2].str() + "\" beside verdict " + m[3].str() +
             " \"" + m[4].str() + "\"\n";
  }
  return out;
}

// Why the DOM of the stepped cell's page lacks what it must show, or "".
std::string cell_dom_problem(const std::string& dom) {
  if (count(dom, "class=\"nightjar-figure\"") != 1) return "no history figure";
  if (count(dom, "class=\"mean-line\"") != 1) return "no mean line";
  if (count(dom, "class=\"change-point\" data-build=\"" + night_label(kStepNight) + "\"") != 1)
    return "no change-point marker at " + night_label(kStepNight);
  if (count(dom, "class=\"build-row\"") != std::size_t(kNights)) return "not one row per build";
  if (count(dom, "<td class=\"regression\">regression</td>") != 1) return "no regression verdict";
  return "";
}

class PublishBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    if (chromium_path().empty()) {
      if (std::getenv("CI")) FAIL() << "chromium missing in CI: ci/install-browser.sh installs it";
      GTEST_SKIP() << "chromium is not installed (ci/install-browser.sh installs it)";
    }
  }
};

TEST_F(PublishBrowser, IndexAndCellPageRenderWithFiguresAndEscapedText) {
  PublishHistory h;
  h.record();
  ASSERT_FALSE(HasFatalFailure());
  std::string site = h.dir.path() + "/site";
  auto r = run_nightjar({"publish", "--db", h.db, "-o", site});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // The index, as Chromium parsed it.
  std::string index_dom = chromium("--dump-dom", "file://" + site + "/index.html", h.dir.path());
  EXPECT_EQ(count(index_dom, "class=\"cell-row\""), 3u) << index_dom;
  EXPECT_EQ(count(index_dom, "class=\"nightjar-figure small\""), 3u);
  EXPECT_EQ(count(index_dom, "regression since " + night_label(kStepNight)), 1u);
  // The two cells without a step: their status is their latest verdict
  // (issue 36), never the trend's bare "no change".
  EXPECT_EQ(count(index_dom, "<td class=\"status none\">"), 0u) << index_dom;
  EXPECT_EQ(count(index_dom, " vs " + night_label(kStepNight - 1) + "</td>") +
                count(index_dom, "no change since " + night_label(kStepNight - 1) + "</td>"),
            2u)
      << index_dom;
  // `<script>` in a cell id is text, not an element: one script, the filter's.
  EXPECT_EQ(count(index_dom, "<script"), 1u);
  EXPECT_EQ(count(index_dom, "&lt;script&gt;alert(\"x\")&lt;/script&gt;"), 1u) << index_dom;
  EXPECT_EQ(count(index_dom, kUnicodeArg), 3u);  // link text, data-cell, data-label
  EXPECT_GE(count(index_dom, kLongDir), 3u);     // in every cell id

  // The index fits the window; without the rule that wraps cell ids it
  // would not (the negative control: the check can fail).
  const std::string index_html = read_file(site + "/index.html");
  const int width = page_width(index_html, h.dir, "width.html");
  EXPECT_GT(width, 0) << "no scrollWidth in the DOM";
  EXPECT_LE(width, kWidth) << "the index is wider than the window";
  std::string unwrapped = index_html;
  const std::string rule = "overflow-wrap: anywhere;";
  ASSERT_NE(unwrapped.find(rule), std::string::npos);
  unwrapped.erase(unwrapped.find(rule), rule.size());
  EXPECT_GT(page_width(unwrapped, h.dir, "unwrapped.html"), kWidth);

  // The stepped cell's page: its link is the first row's (worst first).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(index_dom, m, std::regex("href=\"(cells/[0-9a-f]{16}\\.html)\"")));
  const std::string cell_url = "file://" + site + "/" + m[1].str();
  std::string cell_dom = chromium("--dump-dom", cell_url, h.dir.path());
  EXPECT_EQ(cell_dom_problem(cell_dom), "") << cell_dom;
  EXPECT_EQ(count(cell_dom, "data-label=\"&lt;b&gt;&quot;v&quot;&lt;/b&gt;ü"), 1u) << cell_dom;
  EXPECT_EQ(count(cell_dom, "<script"), 0u);

  // Screenshots: drawn, of the window's size.
  const std::string index_png = h.dir.path() + "/index.png", cell_png = h.dir.path() + "/cell.png";
  chromium("--screenshot=" + index_png, "file://" + site + "/index.html", h.dir.path());
  chromium("--screenshot=" + cell_png, cell_url, h.dir.path());
  EXPECT_EQ(figure_problem(read_file(index_png), 150), "") << index_png;
  EXPECT_EQ(figure_problem(read_file(cell_png), 400), "") << cell_png;

  // Negative control: the same page without its figure fails both checks.
  std::string page = read_file(site + "/" + m[1].str());
  std::string stripped = page;
  auto svg_begin = stripped.find("<svg"), svg_end = stripped.find("</svg>");
  ASSERT_NE(svg_begin, std::string::npos);
  ASSERT_NE(svg_end, std::string::npos);
  stripped.erase(svg_begin, svg_end + 6 - svg_begin);
  std::string broken = h.dir.write("site/cells/no-figure.html", stripped);
  EXPECT_NE(cell_dom_problem(chromium("--dump-dom", "file://" + broken, h.dir.path())), "");
  const std::string broken_png = h.dir.path() + "/broken.png";
  chromium("--screenshot=" + broken_png, "file://" + broken, h.dir.path());
  EXPECT_NE(figure_problem(read_file(broken_png), 400), "");
  if (const char* keep = std::getenv("NIGHTJAR_BROWSER_KEEP")) {
    for (const auto& f : {index_png, cell_png, broken_png})
      fs::copy_file(f, fs::path(keep) / fs::path(f).filename(),
                    fs::copy_options::overwrite_existing);
  }
}

// Issue 36, a new user's 16 nights at 1280 pixels (the fixture with a
// planted -10% step and a planted +8% improvement three nights before the
// end, which the latest comparison finds inconclusive): every page kind fits
// the window (document scrollWidth <= 1280; the compare page was 1549) with
// the compare page's verdicts inside it, and each index row's status is its
// latest verdict's decision (before: "no change" beside "inconclusive").
TEST_F(PublishBrowser, LongHistoryFitsTheWindowAndStatusAgreesWithVerdict) {
  PublishHistory h;
  h.nights = 16;
  h.improvement = true;
  h.record();
  ASSERT_FALSE(HasFatalFailure());
  const std::string site = h.dir.path() + "/site";
  auto r = run_nightjar({"publish", "--db", h.db, "-o", site});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string index_dom =
      chromium("--dump-dom", "file://" + site + "/index.html", h.dir.path());
  std::size_t rows = 0;
  EXPECT_EQ(disagreements(index_dom, rows), "") << index_dom;
  EXPECT_EQ(rows, 4u) << index_dom;
  EXPECT_EQ(count(index_dom,
                  "<td class=\"status regression\">regression since " + night_label(kStepNight)),
            1u)
      << index_dom;

  std::smatch cell, cmp;
  ASSERT_TRUE(
      std::regex_search(index_dom, cell, std::regex("href=\"(cells/[0-9a-f]{16}\\.html)\"")));
  ASSERT_TRUE(
      std::regex_search(index_dom, cmp, std::regex("href=\"(compare/[0-9a-f]{16}\\.html)\"")));
  struct Page {
    std::string file, copy, selector, shot;
  };
  const Page pages[] = {
      {"index.html", "w-index.html", "td.verdict", "long-index.png"},
      {cell[1].str(), "cells/w-cell.html", "table.builds th", "long-cell.png"},
      {cmp[1].str(), "compare/w-compare.html", "tr.compare-row td[title]", "long-compare.png"},
  };
  for (const auto& p : pages) {
    const Measured m = measure(read_file(site + "/" + p.file), h.dir, p.copy, p.selector);
    EXPECT_GT(m.scroll_width, 0) << p.file << ": no scrollWidth in the DOM";
    EXPECT_LE(m.scroll_width, kWidth) << p.file << " is wider than the window";
    EXPECT_GT(m.right, 0) << p.file << ": no " << p.selector;
    EXPECT_LE(m.right, kWidth) << p.file << ": " << p.selector << " ends off the window";
  }
  if (const char* keep = std::getenv("NIGHTJAR_BROWSER_KEEP")) {
    for (const auto& p : pages)
      chromium("--screenshot=" + std::string(keep) + "/" + p.shot, "file://" + site + "/" + p.file,
               h.dir.path());
  }
}

}  // namespace

namespace {

// The frames' fills in a flame graph's DOM, by colour: red (more samples in
// NEW: rgb(220,x,x), x < 220), blue (fewer: rgb(x,x,220)), orange (only in
// NEW: rgb(255,190,90)); d3-flame-graph's differentialColorMapper.
struct FlameFills {
  std::size_t rects = 0, red = 0, blue = 0, orange = 0;
};

FlameFills flame_fills(const std::string& dom) {
  FlameFills f;
  static const std::regex fill("<rect[^>]*fill=\"rgb\\(([0-9]+), ?([0-9]+), ?([0-9]+)\\)\"");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), fill); it != std::sregex_iterator();
       ++it) {
    const int r = std::stoi((*it)[1]), g = std::stoi((*it)[2]), b = std::stoi((*it)[3]);
    ++f.rects;
    if (r == 220 && g == b && g < 220) ++f.red;
    if (b == 220 && r == g && r < 220) ++f.blue;
    if (r == 255 && g == 190 && b == 90) ++f.orange;
  }
  return f;
}

}  // namespace

TEST_F(PublishBrowser, FlameGraphPageDrawsRedAndBlueFramesAndNamesTheSides) {
  TempDir dir;
  const std::string db = profile_fixture_db(dir);
  ASSERT_FALSE(HasFailure());
  fs::create_directories(dir.path() + "/site");
  const std::string page = dir.path() + "/site/flame.html";
  auto r = run_nightjar({"compare", "a", "b", "--db", db, "--why", "--flamegraph", page});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const std::string dom = chromium("--dump-dom", "file://" + page, dir.path(), 5000);
  // d3-flame-graph drew two SVGs, NEW's stacks and BASE's, a <rect> per
  // frame: all, main, f, g, h and n (NEW), all, main, f, g, h and k (BASE).
  EXPECT_EQ(count(dom, "<svg"), 2u) << dom.substr(0, 2000);
  EXPECT_TRUE(std::regex_search(dom, std::regex("<svg[^>]*class=\"[^\"]*d3-flame-graph")));
  const FlameFills fills = flame_fills(dom);
  EXPECT_EQ(fills.rects, 12u);
  EXPECT_EQ(fills.red, 2u);     // h: +250 samples in NEW, in both graphs
  EXPECT_EQ(fills.blue, 3u);    // g: −250, in both; k: only in BASE
  EXPECT_EQ(fills.orange, 1u);  // n: only in NEW
  EXPECT_NE(dom.find("red: more in NEW (b)"), std::string::npos);
  EXPECT_NE(dom.find("blue: fewer than BASE (a)"), std::string::npos);
  // The frames' widths were set (transitions ran): h is wider than n.
  std::smatch h, n;
  ASSERT_TRUE(std::regex_search(
      dom, h, std::regex("<g[^>]*name=\"h\"[^>]*>\\s*<rect[^>]*width=\"([0-9.]+)\"")))
      << dom.substr(0, 4000);
  ASSERT_TRUE(std::regex_search(
      dom, n, std::regex("<g[^>]*name=\"n\"[^>]*>\\s*<rect[^>]*width=\"([0-9.]+)\"")));
  EXPECT_GT(std::stod(h[1].str()), 3 * std::stod(n[1].str()));
  // The sample counts are on the page (the fixture's 5 iterations a side).
  EXPECT_NE(dom.find("samples in 5 iteration(s) (cpu-clock)"), std::string::npos);

  // The screenshot: both colours drawn (fill-opacity 0.8 on white: red
  // rgb(220,71,71) shows as about (227,108,108), blue (0,0,220) as (51,51,227)).
  const std::string png = dir.path() + "/flame.png";
  chromium("--screenshot=" + png, "file://" + page, dir.path(), 5000);
  Image img;
  ASSERT_EQ(decode_png(read_file(png), img), "");
  EXPECT_EQ(img.width, std::uint32_t(kWidth));
  if (const char* keep = std::getenv("NIGHTJAR_BROWSER_KEEP"))
    fs::copy_file(png, fs::path(keep) / "flame.png", fs::copy_options::overwrite_existing);
  EXPECT_GT(pixels_near(img, 0xe36c6c), 1000u) << png;
  EXPECT_GT(pixels_near(img, 0x3333e3), 1000u) << png;
}
