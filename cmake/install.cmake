# Installing (docs/install.md): PREFIX/bin/gpudays, the catalog under PREFIX/share/gpudays (found
# beside the binary: catalog/catalog.h), the docs under PREFIX/share/doc/gpudays, and
#  - the CPU build: every shared library it loads but the C library's own (libc, libm, libdl,
#    libpthread, librt, libutil, the loader) under PREFIX/lib/gpudays: LibTorch's CPU libraries
#    (with the two CUDA runtime stubs the wheel's libtorch_cpu links), Debian's sqlite, ICU,
#    toml++, fmt, stb, and libstdc++. The binary's RPATH is $ORIGIN/../lib/gpudays, as DT_RPATH so
#    that it also serves those libraries' own dependencies; the install moves anywhere.
#  - the CUDA variant (GPUDAYS_CUDA): the torch wheel it was built against stays where it is (its
#    CUDA libraries are gigabytes and come with the wheel and the driver): the RPATH names that
#    wheel's lib/ absolutely, and share/gpudays/BUILD says which it is.
function(gpudays_install_rules target)
  install(DIRECTORY "${CMAKE_SOURCE_DIR}/configs/" DESTINATION share/gpudays)
  install(FILES "${CMAKE_SOURCE_DIR}/README.md" DESTINATION share/doc/gpudays)
  install(DIRECTORY "${CMAKE_SOURCE_DIR}/docs/" DESTINATION share/doc/gpudays/docs)
  install(FILES "${GPUDAYS_BUILD_NOTE}" DESTINATION share/gpudays RENAME BUILD)
  if(GPUDAYS_CUDA)
    # The wheel's torch/lib and every other directory it links from (the CUDA runtime's).
    set_target_properties(${target} PROPERTIES INSTALL_RPATH "${GPUDAYS_TORCH_LIB_DIR}"
                                               INSTALL_RPATH_USE_LINK_PATH TRUE)
    install(TARGETS ${target} RUNTIME DESTINATION bin)
    return()
  endif()
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN/../lib/gpudays")
  target_link_options(${target} PRIVATE "LINKER:--disable-new-dtags")
  install(TARGETS ${target} RUNTIME_DEPENDENCY_SET gpudays_runtime RUNTIME DESTINATION bin)
  install(RUNTIME_DEPENDENCY_SET gpudays_runtime
          PRE_EXCLUDE_REGEXES "^ld-linux" "^linux-vdso" "^lib(c|m|dl|pthread|rt|util)\\.so"
          POST_EXCLUDE_REGEXES "/ld-linux[^/]*$" "/lib(c|m|dl|pthread|rt|util)\\.so[^/]*$"
          DIRECTORIES "${GPUDAYS_TORCH_LIB_DIR}"
          LIBRARY DESTINATION lib/gpudays)
endfunction()
