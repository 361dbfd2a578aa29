# Sanitized builds, each in its own build directory so the normal build stays untouched.
# GPUDAYS_SANITIZE=ON: every target with AddressSanitizer and UndefinedBehaviorSanitizer (any
# compiler; `make test-asan` runs the unit suite so, in build-asan/). GPUDAYS_FUZZ=ON (clang): the
# same plus libFuzzer's coverage instrumentation, and the fuzz targets of tests/fuzz instead of the
# unit tests (`make fuzz`, in build-fuzz/). Undefined behaviour aborts rather than printing and
# going on, so that a test or a fuzz run fails on it.
option(GPUDAYS_SANITIZE "Build everything with -fsanitize=address,undefined" OFF)
option(GPUDAYS_FUZZ "Build the libFuzzer targets (tests/fuzz; clang) with ASan and UBSan" OFF)

if(GPUDAYS_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "GPUDAYS_FUZZ needs clang (libFuzzer): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang")
  endif()
  set(GPUDAYS_SANITIZE ON)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(GPUDAYS_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
endif()
