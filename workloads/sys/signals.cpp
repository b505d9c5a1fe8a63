#include "workloads/sys/signals.h"

#include <csignal>

#include "results/model/exit_codes.h"

namespace nightjar {
namespace {
volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_interrupt(int sig) {
  g_signal = sig;
}
}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking calls return EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() {
  return g_signal != 0;
}
int interrupt_signal() {
  return g_signal;
}

void throw_if_interrupted() {
  if (interrupted()) throw Interrupted();
}

}  // namespace nightjar
