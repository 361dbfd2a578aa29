# The CUDA runtime and NCCL for the CUDA variant (GPUDAYS_CUDA=ON), taken from the same Python
# torch installation as LibTorch so that one copy of each is loaded: the wheel's nvidia/cu13 (or
# nvidia/cuda_runtime) and nvidia/nccl packages, else the CUDA toolkit and the system. Defines the
# imported targets gpudays::cudart (always) and gpudays::nccl (when NCCL is found).

# _gpudays_import(target, header_dir, library): an imported shared library with its headers.
function(_gpudays_import target header_dir library)
  add_library(${target} SHARED IMPORTED)
  set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${library}"
                                             INTERFACE_INCLUDE_DIRECTORIES "${header_dir}")
endfunction()

function(gpudays_setup_cuda torch_dir)
  cmake_path(SET nvidia NORMALIZE "${torch_dir}/../nvidia")

  # CUDA runtime: the wheel's (the one libtorch_cuda loads), else the toolkit's. The headers count
  # only when complete: cuda_runtime.h includes crt/host_config.h, which some wheels of CUDA 13
  # leave to a separate package (seen on the GPU machine, 2026-12-04); the toolkit's headers then
  # serve with the wheel's library (same major version).
  find_path(GPUDAYS_CUDART_HEADERS crt/host_config.h NO_DEFAULT_PATH
            PATHS "${nvidia}/cu13/include" "${nvidia}/cuda_runtime/include")
  find_library(GPUDAYS_CUDART_LIBRARY NAMES libcudart.so.13 libcudart.so.12 NAMES_PER_DIR
               NO_DEFAULT_PATH
               PATHS "${nvidia}/cu13/lib" "${nvidia}/cuda_runtime/lib")
  # The fallbacks are plain variables: a later configure searches the wheel again.
  set(headers "${GPUDAYS_CUDART_HEADERS}")
  set(library "${GPUDAYS_CUDART_LIBRARY}")
  if(NOT GPUDAYS_CUDART_HEADERS OR NOT GPUDAYS_CUDART_LIBRARY)
    find_package(CUDAToolkit REQUIRED)
    if(NOT GPUDAYS_CUDART_LIBRARY)
      set(library "${CUDA_cudart_LIBRARY}")
    endif()
    if(NOT GPUDAYS_CUDART_HEADERS)
      set(headers "${CUDAToolkit_INCLUDE_DIRS}")
      # The toolkit's headers with the wheel's runtime: the same major version, or the structures
      # the two sides pass would differ.
      if(library MATCHES "libcudart\\.so\\.([0-9]+)$")
        set(runtime_major "${CMAKE_MATCH_1}")
        if(NOT runtime_major STREQUAL CUDAToolkit_VERSION_MAJOR)
          message(FATAL_ERROR "The CUDA runtime ${library} comes without complete headers "
                              "(crt/host_config.h), and the CUDA toolkit found is "
                              "${CUDAToolkit_VERSION}, not ${runtime_major}.x: install a CUDA "
                              "${runtime_major} toolkit (or the wheel's nvidia-cuda-crt)")
        endif()
      endif()
    endif()
  endif()
  _gpudays_import(gpudays::cudart "${headers}" "${library}")
  message(STATUS "CUDA runtime: ${library} (headers ${headers})")

  # NCCL: the wheel's nvidia/nccl, else the system's (GPUDAYS_NCCL_ROOT or the default paths).
  set(GPUDAYS_NCCL_ROOT "" CACHE PATH "Folder with include/nccl.h and lib/libnccl.so*")
  find_path(GPUDAYS_NCCL_INCLUDE nccl.h
            HINTS "${GPUDAYS_NCCL_ROOT}/include" "${nvidia}/nccl/include")
  find_library(GPUDAYS_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR
               HINTS "${GPUDAYS_NCCL_ROOT}/lib" "${nvidia}/nccl/lib")
  if(GPUDAYS_NCCL_INCLUDE AND GPUDAYS_NCCL_LIBRARY)
    _gpudays_import(gpudays::nccl "${GPUDAYS_NCCL_INCLUDE}" "${GPUDAYS_NCCL_LIBRARY}")
    message(STATUS "NCCL: ${GPUDAYS_NCCL_LIBRARY} (headers ${GPUDAYS_NCCL_INCLUDE})")
  else()
    message(WARNING "NCCL not found (no nvidia/nccl beside torch, GPUDAYS_NCCL_ROOT unset): the "
                    "CUDA build has no NCCL communicator")
  endif()
endfunction()
