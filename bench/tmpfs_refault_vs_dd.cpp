// Helper of bench/tmpfs_refault_vs_dd.sh: holds one tmpfs_refault rig (zram
// swap, memcg, tmpfs, the written file; workloads/tmpfs_refault.h) while the
// script compares nightjar's timed read with dd on the same freshly evicted
// file. Line protocol, one command per line on stdin, one reply per line on
// stdout:
//
//   (start)  file <path> / memcg <dir or -> / pages <n> / evict <method> / ready
//   evict    -> "evicted <seconds>"          (the file is pushed out and verified)
//   read     -> "read <seconds> <pswpin Δ>"   (nightjar's reader, as the workload)
//   quit, or end of stdin, SIGINT, SIGTERM -> teardown of the rig, exit
//   errors   -> "error <reason>" (and exit 4 when setup failed)
//
//   tmpfs_refault_vs_dd [--size 256M] [--pattern mixed] [--evict auto] [--block-size 1M]
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "results/model/exit_codes.h"
#include "results/model/params.h"
#include "workloads/sys/signals.h"
#include "workloads/sys/zram.h"
#include "workloads/tmpfs_refault.h"

namespace {

/// One line of stdin without stdio buffering surprises; false at end of
/// input or when interrupted.
bool read_line(std::string& line) {
  line.clear();
  char c;
  for (;;) {
    ssize_t n = ::read(0, &c, 1);
    if (n < 0 && errno == EINTR) {
      if (nightjar::interrupted()) return false;
      continue;
    }
    if (n <= 0) return !line.empty();
    if (c == '\n') return true;
    line.push_back(c);
  }
}

void reply(const std::string& text) {
  std::printf("%s\n", text.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nightjar;
  std::string size_text = "256M", pattern = "mixed", evict = "auto", block = "1M";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tmpfs_refault_vs_dd: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--size")
      size_text = value();
    else if (a == "--pattern")
      pattern = value();
    else if (a == "--evict")
      evict = value();
    else if (a == "--block-size")
      block = value();
    else {
      std::fprintf(stderr,
                   "usage: tmpfs_refault_vs_dd [--size 256M] [--pattern mixed] [--evict auto] "
                   "[--block-size 1M]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  install_interrupt_handlers();
  refault::RigOptions o;
  try {
    const MachineFacts machine = probe_machine_facts();
    ParamDescriptor size_desc{"size", ParamType::size, "bytes", "", "", {}, 1048576.0, {}};
    o.size = static_cast<std::uint64_t>(parse_param(size_desc, size_text, machine).number);
    o.block_size = static_cast<std::size_t>(parse_param(size_desc, block, machine).number);
  } catch (const ParamError& e) {
    std::fprintf(stderr, "tmpfs_refault_vs_dd: --%s: %s\n", e.field.c_str(), e.message.c_str());
    return 2;
  }
  auto p = refault::pattern_from_string(pattern);
  auto m = refault::evict_from_string(evict);
  if (!p || !m) {
    std::fprintf(stderr, "tmpfs_refault_vs_dd: bad --pattern or --evict\n");
    return 2;
  }
  o.pattern = *p;
  o.evict = *m;
  o.tag = "tmpfs_refault-bench-" + std::to_string(::getpid());
  o.interrupted = [] { return interrupted(); };

  try {
    refault::RefaultRig rig(o);
    rig.write_file();
    reply("file " + rig.file_path());
    reply("memcg " + (rig.memcg_dir().empty() ? std::string("-") : rig.memcg_dir()));
    reply("pages " + std::to_string(rig.pages()));
    reply("evict " + std::string(refault::to_string(rig.method())));
    reply("ready");
    std::string cmd;
    while (read_line(cmd)) {
      if (cmd == "quit") break;
      if (cmd == "evict") {
        refault::EvictResult e = rig.evict();
        if (e.failure)
          reply("error " + *e.failure);
        else
          reply("evicted " + std::to_string(e.seconds));
      } else if (cmd == "read") {
        refault::ReadResult r = rig.read_file();
        if (r.failure) {
          reply("error " + *r.failure);
        } else {
          auto it = r.vmstat.find("pswpin");
          char buf[96];
          std::snprintf(buf, sizeof buf, "read %.6f %.0f", r.seconds,
                        it == r.vmstat.end() ? -1.0 : it->second);
          reply(buf);
        }
      } else {
        reply("error unknown command '" + cmd + "' (evict, read, quit)");
      }
    }
  } catch (const Error& e) {
    reply(std::string("error ") + e.what());
    std::fprintf(stderr, "tmpfs_refault_vs_dd: %s\n", e.what());
    return to_int(e.code());
  }
  return interrupted() ? to_int(ExitCode::interrupted) : 0;
}
