// A crash of the LibTorch test binary says where it happened before the process dies: the faulting
// instruction and the code addresses found on the crashing thread's stack, named where the loader
// can (the binary exports its symbols), then every thread's stack (c10's fatal-signal handler,
// which cannot unwind past a frame without unwind information, such as a jump to a bad address). On
// the GPU machine the log is all that comes back (scripts/gpu-check.sh), and "Segmentation fault"
// alone says only which test was running. Not async-signal-safe (the process is dying anyway);
// an alarm ends a handler that hangs. c10's handler also takes SIGINT, SIGABRT, SIGBUS and others
// in this binary: Ctrl-C prints every thread's stack.
#include <c10/util/signal_handler.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <pthread.h>
#include <ucontext.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

struct sigaction g_previous {};

// "pc 0x... in libfoo.so (name+0x12)" or "pc 0x... (no object)".
void describe(const char* what, void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) {
    std::fprintf(stderr, "  %s %p (no object)\n", what, address);
    return;
  }
  int status = 0;
  char* demangled =
      info.dli_sname ? abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status) : nullptr;
  const char* name = demangled ? demangled : (info.dli_sname ? info.dli_sname : "?");
  const auto* base = static_cast<const char*>(info.dli_saddr ? info.dli_saddr : info.dli_fbase);
  std::fprintf(stderr,
               "  %s %p in %s (%.200s+0x%lx)\n",
               what,
               address,
               info.dli_fname,
               name,
               static_cast<unsigned long>(static_cast<const char*>(address) - base));
  std::free(demangled);
}

void on_fatal_signal(int signal, siginfo_t* info, void* context) {
  alarm(30);  // a fault inside malloc could hang what follows: the process dies within 30 s anyway
#if defined(__x86_64__)
  const auto* uc = static_cast<const ucontext_t*>(context);
  std::fprintf(stderr, "fatal signal %d, address %p\n", signal, info->si_addr);
  describe("pc", reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]));
  // Words of the stack (older frames above the stack pointer) that point into named code, not at
  // a symbol's start: return addresses, mostly.
  const auto* stack = reinterpret_cast<const uintptr_t*>(uc->uc_mcontext.gregs[REG_RSP]);
  const uintptr_t* end = stack + 4096;  // 32 KiB at most, and not past the thread's stack
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* low = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &low, &size) == 0) {
      const auto* top = reinterpret_cast<const uintptr_t*>(static_cast<char*>(low) + size);
      if (top < end) end = top;
    }
    pthread_attr_destroy(&attr);
  }
  int named = 0;
  for (const uintptr_t* word = stack; word < end && named < 40; ++word) {
    Dl_info d{};
    void* value = reinterpret_cast<void*>(*word);
    if (dladdr(value, &d) != 0 && d.dli_sname != nullptr && d.dli_saddr != value) {
      describe("on the stack", value);
      ++named;
    }
  }
#endif
  if (g_previous.sa_flags & SA_SIGINFO) {
    g_previous.sa_sigaction(signal, info, context);
  } else {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
}

[[maybe_unused]] const bool kCrashTracesOn = [] {
#if defined(C10_SUPPORTS_FATAL_SIGNAL_HANDLERS)
  c10::FatalSignalHandler::getInstance().setPrintStackTracesOnFatalSignal(true);
#endif
  struct sigaction action {};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &g_previous);
  return true;
}();

}  // namespace
