// SIGINT/SIGTERM to a flag, and back.
#include "common/interrupt.h"

#include <signal.h>

#include <string>

namespace gpudays {
namespace {

volatile sig_atomic_t g_signal = 0;
struct sigaction g_previous_int;
struct sigaction g_previous_term;

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
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
  g_signal = 0;  // outside a scope nothing is interrupted: signals take their previous course
}

int interrupted() {
  return g_signal;
}

void throw_if_interrupted() {
  if (g_signal != 0) throw Interrupted(g_signal);
}

}  // namespace gpudays
