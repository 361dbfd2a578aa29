// What the fuzz targets share: the input as a scratch file (the loaders take paths, as the command
// line does), and the rule that only the project's documented error type for bad input,
// InputError, may leave an entry point. Anything else (another exception, a broken invariant) is a
// bug: it is printed and the process aborts, which libFuzzer reports as a crash, saving the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "common/error.h"

namespace gpudays::fuzz {

// Writes the input to this process's scratch file NAME (under $TMPDIR) and returns its path. The
// file is reused by every input and removed when the process exits normally.
std::string write_input(const uint8_t* data, size_t size, const std::string& name);

// Prints "fuzz: bug: WHAT" on stderr and aborts.
[[noreturn]] void fail(std::string_view what);

// Runs `f`; returns true when it returned, false when it threw InputError (bad input, answered with
// a one-line message at the command line). Any other exception fails.
template <typename F>
bool accepts(F&& f) {
  try {
    f();
    return true;
  } catch (const InputError&) {
    return false;
  } catch (const std::exception& e) {
    fail(std::string("an exception other than InputError escaped: ") + e.what());
  } catch (...) {
    fail("a non-standard exception escaped");
  }
}

}  // namespace gpudays::fuzz
