# Stamps the build with the project version and git commit (provenance of every result row): the
# version and the catalog directory at configure time (src/common/build_info.h.in), the commit at
# every build (cmake/stamp_commit.cmake: gpudays::git_commit() and the install's BUILD note).
set(GPUDAYS_CONFIG_DIR "${CMAKE_SOURCE_DIR}/configs")
set(GPUDAYS_STAMP_DIR "${CMAKE_BINARY_DIR}/generated/common")
set(GPUDAYS_BUILD_NOTE "${CMAKE_BINARY_DIR}/install-BUILD")
set(gpudays_torch_note "none (built without LibTorch)")
if(GPUDAYS_WITH_TORCH)
  set(gpudays_torch_note "${GPUDAYS_TORCH_LIB_DIR}")
endif()
set(gpudays_variant "cpu")
if(GPUDAYS_CUDA)
  set(gpudays_variant "cuda")
endif()
set(gpudays_stamp_command
    ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUT_DIR=${GPUDAYS_STAMP_DIR}
    -DBUILD_NOTE=${GPUDAYS_BUILD_NOTE} -DVERSION=${PROJECT_VERSION} -DVARIANT=${gpudays_variant}
    "-DTORCH_NOTE=${gpudays_torch_note}" -P ${CMAKE_SOURCE_DIR}/cmake/stamp_commit.cmake)
file(MAKE_DIRECTORY ${GPUDAYS_STAMP_DIR})
execute_process(COMMAND ${gpudays_stamp_command})
add_custom_target(gpudays_commit_stamp
  COMMAND ${gpudays_stamp_command}
  BYPRODUCTS ${GPUDAYS_STAMP_DIR}/build_commit.cpp ${GPUDAYS_BUILD_NOTE}
  COMMENT "Stamping the git commit" VERBATIM)
