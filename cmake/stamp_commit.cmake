# The build's git commit, stamped at every build (not only at configure time, which would leave a
# rebuilt binary naming the commit it was configured at): run in script mode by the
# gpudays_commit_stamp target (cmake/provenance.cmake) and once at configure time. Writes OUT_DIR's
# build_commit.cpp (gpudays::git_commit()) and BUILD_NOTE (share/gpudays/BUILD of an install) only
# when their text changes, so that an unchanged commit rebuilds and relinks nothing.
# Input: SOURCE_DIR, OUT_DIR, BUILD_NOTE, VERSION, VARIANT, TORCH_NOTE.
execute_process(
  COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE commit
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET)
execute_process(
  COMMAND git --no-optional-locks status --porcelain --untracked-files=no
  WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE dirty
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET)
if(NOT commit)
  set(commit "unknown")
elseif(dirty)
  set(commit "${commit}-dirty")
endif()

function(write_if_changed path text)
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${text}")
endfunction()

write_if_changed("${OUT_DIR}/build_commit.cpp"
                 "// Written by cmake/stamp_commit.cmake at build time.\n#include \"common/build_info.h\"\n\nnamespace gpudays {\nconst char* git_commit() { return \"${commit}\"; }\n}  // namespace gpudays\n")
write_if_changed("${BUILD_NOTE}"
                 "gpudays ${VERSION} (${commit}), ${VARIANT} build\nLibTorch it was built against: ${TORCH_NOTE}\n")
