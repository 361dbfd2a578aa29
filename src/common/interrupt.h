// Ctrl-C, SIGTERM and the other stopping signals (SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2,
// SIGXCPU) during long work (a sweep, a training run, tokenizing, a report): while an
// InterruptScope lives, they only set a flag; waits poll it (interrupted()), stop what they run
// (a trial's whole process group) and throw Interrupted, so that nothing partial is recorded and
// every RAII cleanup runs. The command line exits with 128 + the signal (130, 143, 129).
#pragma once

#include <stdexcept>

namespace gpudays {

class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal);
  int signal() const { return signal_; }

 private:
  int signal_;
};

class InterruptScope {
 public:
  InterruptScope();   // installs the handlers
  ~InterruptScope();  // restores the previous ones
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

// The signal received since the scope began (0: none, and 0 outside a scope).
int interrupted();
// Throws Interrupted when a signal was received.
void throw_if_interrupted();

}  // namespace gpudays
