// The stopping signals to a flag, and back.
#include "common/interrupt.h"

#include <signal.h>

#include <array>
#include <string>

namespace gpudays {
namespace {

// Every signal whose default is to end the process and that a user, a terminal, a pipe or a
// scheduler sends to ask it to stop: Ctrl-C, kill, Slurm's pre-emption (TERM), a closed terminal
// or ssh session (HUP), Ctrl-\ (QUIT), a reader that went away (PIPE: a report piped into a
// pager that was quit), the user signals, and a CPU-time limit (XCPU).
constexpr std::array<int, 8> kStopSignals = {
    SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGXCPU};

volatile sig_atomic_t g_signal = 0;
std::array<struct sigaction, kStopSignals.size()> g_previous;

void on_signal(int signal) {
  g_signal = signal;
}

}  // namespace

Interrupted::Interrupted(int signal)
    : std::runtime_error("interrupted by signal " + std::to_string(signal)), signal_(signal) {}

InterruptScope::InterruptScope() {
  g_signal = 0;
  struct sigaction action = {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < kStopSignals.size(); ++i) {
    sigaction(kStopSignals[i], &action, &g_previous[i]);
  }
}

InterruptScope::~InterruptScope() {
  for (size_t i = 0; i < kStopSignals.size(); ++i) {
    sigaction(kStopSignals[i], &g_previous[i], nullptr);
  }
  g_signal = 0;  // outside a scope nothing is interrupted: signals take their previous course
}

int interrupted() {
  return g_signal;
}

void throw_if_interrupted() {
  if (g_signal != 0) throw Interrupted(g_signal);
}

}  // namespace gpudays
