// Running gnuplot for `nightjar plot`: see harness/cli/gnuplot_run.h.
#include "harness/cli/gnuplot_run.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/process.h"
#include "workloads/sys/signals.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;

constexpr const char* kInstallHint =
    "install the package gnuplot-nox (Debian/Ubuntu: apt-get install gnuplot-nox; "
    "ci/install-deps.sh "
    "installs it), or name the program with --gnuplot PATH";

// A temporary file removed on destruction unless kept.
class TempFile {
 public:
  explicit TempFile(std::string path) : path_(std::move(path)) {}
  ~TempFile() {
    if (!kept_) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  void keep() { kept_ = true; }

 private:
  std::string path_;
  bool kept_ = false;
};

// An empty file beside `output_path` (so that rename() is atomic), with the
// mode a new file gets from the umask.
std::string make_temp_beside(const std::string& output_path) {
  const fs::path out(output_path);
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + out.filename().string() + ".XXXXXX")).string();
  UniqueFd fd(::mkstemp(tmpl.data()));
  if (!fd)
    throw EnvironmentError(fmt::format("plot: -o {}: cannot create a file in {}: {}", output_path,
                                       dir.string(), errno_text(errno)));
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd.get(), 0666 & ~mask);
  return tmpl;
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

std::string find_gnuplot(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (!find_program(program).empty()) return program;
    throw EnvironmentError(
        fmt::format("plot: gnuplot program {} does not exist or is not "
                    "executable; {}",
                    program, kInstallHint));
  }
  const std::string path = program_search_path();
  if (std::string found = find_program(program, path); !found.empty()) return found;
  throw EnvironmentError(fmt::format(
      "plot: {} is not installed (not found on PATH={}); nightjar draws plots with gnuplot: {}",
      program, path, kInstallHint));
}

void render_plot(const PlotData& data, const ImageSpec& image, const std::string& output_path,
                 const std::string& gnuplot_path, double timeout_seconds) {
  install_interrupt_handlers();
  TempFile tmp(make_temp_beside(output_path));
  CommandSpec spec;
  spec.argv = {gnuplot_path, "-d"};  // -d: no ~/.gnuplot, default settings
  spec.input = gnuplot_script(data, image, tmp.path());
  spec.merge_stderr = true;
  spec.timeout_sec = timeout_seconds;
  const CommandResult r = run_command(spec);
  if (r.interrupted) throw Interrupted();  // ~TempFile removes the temporary image
  if (!r.started)
    throw EnvironmentError(fmt::format("plot: cannot start {}: {}; {}", gnuplot_path,
                                       r.start_errno ? errno_text(r.start_errno) : r.error,
                                       kInstallHint));
  if (r.timed_out)
    throw EnvironmentError(fmt::format(
        "plot: {} ran longer than {:g} s drawing {} and was killed; {} was left as it was",
        gnuplot_path, timeout_seconds, output_path, output_path));
  const std::string said = output_tail(r.out, 4);
  if (r.exit_code != 0)
    throw EnvironmentError(fmt::format("plot: {} {} drawing {}{}; {} was left as it was",
                                       gnuplot_path, describe_exit(r.wait_status), output_path,
                                       said.empty() ? "" : ": " + said, output_path));
  if (std::string why = image_problem(read_whole(tmp.path()), image.format); !why.empty())
    throw EnvironmentError(
        fmt::format("plot: {} did not write a valid {} image for {} ({}){}; {} was left as it was",
                    gnuplot_path, image.format == ImageFormat::png ? "PNG" : "SVG", output_path,
                    why, said.empty() ? "" : ": " + said, output_path));
  if (::rename(tmp.path().c_str(), output_path.c_str()) != 0)
    throw EnvironmentError(fmt::format("plot: cannot rename {} to {}: {}", tmp.path(), output_path,
                                       errno_text(errno)));
  tmp.keep();
}

}  // namespace nightjar
