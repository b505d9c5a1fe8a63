// Unit under test: results/io/input_file.h InputFile, the one check that a
// job, CSV or JSON input is a regular file of bounded size (issue 15 "Files"):
// devices, FIFOs and directories refused before a byte is read, the cap
// enforced on the size and on the bytes read, head() not consuming.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "results/io/input_file.h"
#include "results/model/exit_codes.h"
#include "test_support.h"

namespace nightjar {
namespace {

constexpr InputKind kSmall{
    .noun = "test file",
    .expect = "give a test file",
    .max_bytes = 16,
    .cap = "16 bytes",
    .too_large_fix = "write less",
};

std::string error_of(const std::string& path, const InputKind& kind = kSmall) {
  try {
    InputFile f(path, kind);
    (void)f.read_all();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(InputFile, OnlyRegularFilesAreRead) {
  test::TempDir dir;
  EXPECT_EQ(error_of("/dev/zero"),
            "/dev/zero: not a regular file (a character device); give a test file");
  EXPECT_EQ(error_of(dir.path()),
            dir.path() + ": not a regular file (a directory); give a test file");
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of(fifo), fifo + ": not a regular file (a FIFO); give a test file");  // no hang
  EXPECT_EQ(error_of(dir.path() + "/absent"),
            dir.path() + "/absent: cannot read test file: No such file or directory");
  // "-" is a path like any other unless the kind allows stdin.
  EXPECT_NE(error_of("-").find("-: cannot read test file"), std::string::npos);
}

TEST(InputFile, TheCapIsTheLargestFileRead) {
  test::TempDir dir;
  const std::string at_cap = dir.write("a", std::string(16, 'x'));
  InputFile f(at_cap, kSmall);
  EXPECT_EQ(f.read_all(), std::string(16, 'x'));
  EXPECT_EQ(error_of(dir.write("b", std::string(17, 'x'))),
            dir.path() + "/b: larger than a test file may be (16 bytes, 16 bytes); write less");
}

TEST(InputFile, HeadDoesNotConsumeAndTheStreamReadsEverything) {
  test::TempDir dir;
  const std::string path = dir.write("c.csv", "  {\nline 2\n");
  InputFile f(path, kSmall);
  EXPECT_EQ(f.source(), path);
  EXPECT_EQ(f.head(), "  {\nline 2\n");
  std::string first, second;
  std::getline(f.stream(), first);
  std::getline(f.stream(), second);
  EXPECT_EQ(first, "  {");
  EXPECT_EQ(second, "line 2");
  InputFile empty(dir.write("empty", ""), kSmall);
  EXPECT_EQ(empty.head(), "");
  EXPECT_EQ(empty.read_all(), "");
}

// Standard input replaced by a pipe holding `bytes` for one read_all().
std::string read_stdin(const std::string& bytes, const InputKind& kind) {
  int p[2];
  if (::pipe(p) != 0) return "no pipe";
  EXPECT_EQ(::write(p[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::close(p[1]);
  const int saved = ::dup(STDIN_FILENO);
  ::dup2(p[0], STDIN_FILENO);
  ::close(p[0]);
  std::string out;
  try {
    InputFile f("-", kind);
    EXPECT_EQ(f.source(), "(stdin)");
    out = f.read_all();
  } catch (const UsageError& e) {
    out = std::string("error: ") + e.what();
  }
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  return out;
}

TEST(InputFile, StdinIsNamedAndItsBytesAreCounted) {
  InputKind kind = kSmall;
  kind.allow_stdin = true;
  EXPECT_EQ(read_stdin("0123456789abcdef", kind), "0123456789abcdef");
  // A pipe has no size to check up front: the bytes read are counted.
  EXPECT_EQ(read_stdin("0123456789abcdefg", kind),
            "error: (stdin): larger than a test file may be (16 bytes, 16 bytes); write less");
}

}  // namespace
}  // namespace nightjar
