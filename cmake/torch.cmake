# Finds LibTorch inside a Python `torch` package (the PyPI wheel torch==2.11.0) and defines the
# imported target gpudays::torch. CPU builds link only libtorch_cpu and libc10; GPUDAYS_CUDA=ON also
# links libtorch_cuda, libc10_cuda and libtorch from a CUDA torch (e.g. /opt/torch/.venv on the GPU
# machine). The torch folder comes from GPUDAYS_TORCH_DIR, else the project venv (.venv, made by
# `make torch`), else `${GPUDAYS_PYTHON} -c 'import torch'`. The CUDA runtime and NCCL for the CUDA
# variant come from cmake/cuda.cmake.

include(${CMAKE_CURRENT_LIST_DIR}/cuda.cmake)

set(GPUDAYS_TORCH_DIR "" CACHE PATH "Folder of the Python torch package (holds include/ and lib/)")
set(GPUDAYS_PYTHON "" CACHE FILEPATH "Python whose `import torch` locates LibTorch (CUDA builds)")
option(GPUDAYS_CUDA "Link the CUDA LibTorch (libtorch_cuda, libc10_cuda)" OFF)
file(GLOB _gpudays_venv_torch "${CMAKE_SOURCE_DIR}/.venv/lib/python3*/site-packages/torch")
if(_gpudays_venv_torch OR GPUDAYS_TORCH_DIR OR GPUDAYS_PYTHON)
  set(_gpudays_torch_default ON)
else()
  set(_gpudays_torch_default OFF)
endif()
option(GPUDAYS_WITH_TORCH "Build the LibTorch components (src/models) and their tests"
       ${_gpudays_torch_default})

function(_gpudays_find_torch_dir out_var)
  if(GPUDAYS_TORCH_DIR)
    set(${out_var} "${GPUDAYS_TORCH_DIR}" PARENT_SCOPE)
    return()
  endif()
  if(_gpudays_venv_torch AND NOT GPUDAYS_PYTHON)
    list(GET _gpudays_venv_torch 0 dir)
    set(${out_var} "${dir}" PARENT_SCOPE)
    return()
  endif()
  if(GPUDAYS_PYTHON)
    execute_process(
      COMMAND "${GPUDAYS_PYTHON}" -c "import os, torch; print(os.path.dirname(torch.__file__))"
      OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(rc EQUAL 0)
      set(${out_var} "${dir}" PARENT_SCOPE)
      return()
    endif()
  endif()
  set(${out_var} "" PARENT_SCOPE)
endfunction()

# gpudays_cuda_sources(FILE...): in the CUDA variant, these files of the calling directory compile
# with GPUDAYS_CUDA=1 and the CUDA runtime's headers (as system headers); elsewhere nothing.
function(gpudays_cuda_sources)
  if(NOT GPUDAYS_CUDA)
    return()
  endif()
  get_target_property(cudart_include gpudays::cudart INTERFACE_INCLUDE_DIRECTORIES)
  set(options "")
  foreach(dir IN LISTS cudart_include)  # the toolkit's are a list (include/, include/cccl)
    list(APPEND options -isystem "${dir}")
  endforeach()
  set_source_files_properties(${ARGN} PROPERTIES COMPILE_DEFINITIONS GPUDAYS_CUDA=1
                              COMPILE_OPTIONS "${options}")
endfunction()

# gpudays_setup_torch(): defines gpudays::torch or fails naming what is missing.
function(gpudays_setup_torch)
  _gpudays_find_torch_dir(torch_dir)
  if(NOT torch_dir OR NOT EXISTS "${torch_dir}/include/torch")
    message(FATAL_ERROR "LibTorch not found (GPUDAYS_TORCH_DIR='${GPUDAYS_TORCH_DIR}', no "
                        ".venv torch): run `make torch` or pass -DGPUDAYS_TORCH_DIR=<site-packages/torch>")
  endif()
  set(lib_dir "${torch_dir}/lib")
  # Not libtorch.so: the wheel's holds no torch code but a copy of std::filesystem, exported, and
  # linked ahead of libstdc++ it took every std::filesystem call of the program; its remove_all
  # jumped to a null address on the GPU machine (2026-12-04: a resume test crashed; checkpoint
  # pruning would have). libtorch_cuda comes in directly (--no-as-needed below).
  set(libs torch_cpu c10)
  if(GPUDAYS_CUDA)
    set(libs torch_cuda c10_cuda torch_cpu c10)
  endif()
  # Wheels since torch 2.7 use the C++11 ABI; read it from libc10 rather than assume it.
  file(STRINGS "${lib_dir}/libc10.so" cxx11_symbols REGEX "__cxx11" LIMIT_COUNT 1)
  set(abi 0)
  if(cxx11_symbols)
    set(abi 1)
  endif()

  # torch/include bundles fmt 12 headers, which would shadow Debian's libfmt (the one we link):
  # expose a mirror of torch/include without them.
  set(include_dir "${CMAKE_BINARY_DIR}/torch-include")
  file(REMOVE_RECURSE "${include_dir}")
  file(MAKE_DIRECTORY "${include_dir}")
  file(GLOB entries RELATIVE "${torch_dir}/include" "${torch_dir}/include/*")
  list(REMOVE_ITEM entries fmt)
  foreach(entry IN LISTS entries)
    file(CREATE_LINK "${torch_dir}/include/${entry}" "${include_dir}/${entry}" SYMBOLIC)
  endforeach()

  add_library(gpudays_torch INTERFACE)
  add_library(gpudays::torch ALIAS gpudays_torch)
  target_include_directories(gpudays_torch SYSTEM INTERFACE
    "${include_dir}" "${torch_dir}/include/torch/csrc/api/include")
  target_compile_definitions(gpudays_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${abi})
  foreach(lib IN LISTS libs)
    if(NOT EXISTS "${lib_dir}/lib${lib}.so")
      message(FATAL_ERROR "LibTorch: ${lib_dir}/lib${lib}.so is missing (GPUDAYS_CUDA=${GPUDAYS_CUDA})")
    endif()
    list(APPEND lib_paths "${lib_dir}/lib${lib}.so")
  endforeach()
  # --no-as-needed: libtorch_cuda registers its kernels from static initialisers; nothing
  # references it by symbol, so an as-needed linker would drop it. libstdc++ ahead of them:
  # libtorch_cpu exports a copy of std::filesystem too, and the loader binds each symbol to the
  # first library that defines it, so that the program and torch use the standard library's
  # (test Linking.StdFilesystemIsTheStandardLibrarys_CUDA; every one of libtorch_cpu's exported
  # std::filesystem symbols is in libstdc++, checked with nm on torch 2.11).
  target_link_libraries(gpudays_torch INTERFACE "-Wl,--push-state,--no-as-needed" stdc++
                        ${lib_paths} "-Wl,--pop-state")
  if(GPUDAYS_CUDA)
    gpudays_setup_cuda("${torch_dir}")  # cmake/cuda.cmake: gpudays::cudart, gpudays::nccl
    # Linked everywhere, but the CUDA headers and GPUDAYS_CUDA=1 reach only the files that use
    # them (gpudays_cuda_sources(), src/engine; NCCL in src/distributed): every other file compiles
    # with the CPU build's exact command, so ccache serves build-cuda/ from build/'s objects.
    target_link_libraries(gpudays_torch INTERFACE "$<LINK_ONLY:gpudays::cudart>")
  endif()
  message(STATUS "LibTorch: ${torch_dir} (CUDA ${GPUDAYS_CUDA}, _GLIBCXX_USE_CXX11_ABI=${abi})")
  set(GPUDAYS_TORCH_LIB_DIR "${lib_dir}" PARENT_SCOPE)
endfunction()
