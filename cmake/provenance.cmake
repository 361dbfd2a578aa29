# Stamps the build with the project version and git commit (provenance of every result row).
execute_process(
  COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  OUTPUT_VARIABLE GPUDAYS_GIT_COMMIT
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET)
execute_process(
  COMMAND git status --porcelain --untracked-files=no
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  OUTPUT_VARIABLE GPUDAYS_GIT_DIRTY
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET)
if(NOT GPUDAYS_GIT_COMMIT)
  set(GPUDAYS_GIT_COMMIT "unknown")
elseif(GPUDAYS_GIT_DIRTY)
  set(GPUDAYS_GIT_COMMIT "${GPUDAYS_GIT_COMMIT}-dirty")
endif()
set(GPUDAYS_CONFIG_DIR "${CMAKE_SOURCE_DIR}/configs")
