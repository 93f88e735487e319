# Optional baseline libraries. A missing one is reported as a skipped backend at run time.

# libxsmm 1.17 (Debian libxsmm-dev): static only, and the link order matters.
find_path(LIBXSMM_INCLUDE_DIR libxsmm.h)
find_library(LIBXSMM_LIBRARY NAMES libxsmm.a xsmm)
find_library(LIBXSMM_NOBLAS_LIBRARY NAMES libxsmmnoblas.a xsmmnoblas)
if(LIBXSMM_INCLUDE_DIR AND LIBXSMM_LIBRARY AND LIBXSMM_NOBLAS_LIBRARY)
  set(NKBENCH_HAVE_LIBXSMM ON)
  add_library(nk_libxsmm INTERFACE)
  target_include_directories(nk_libxsmm SYSTEM INTERFACE ${LIBXSMM_INCLUDE_DIR})
  target_link_libraries(nk_libxsmm INTERFACE ${LIBXSMM_LIBRARY} ${LIBXSMM_NOBLAS_LIBRARY}
                        Threads::Threads ${CMAKE_DL_LIBS} m rt)
  message(STATUS "libxsmm: ${LIBXSMM_LIBRARY}")
else()
  set(NKBENCH_HAVE_LIBXSMM OFF)
  message(WARNING "libxsmm not found: the libxsmm backend will report every case as skipped")
endif()

# oneDNN 2.6 (Debian libdnnl-dev); its config also needs OpenCL headers.
find_package(dnnl CONFIG QUIET)
if(dnnl_FOUND)
  set(NKBENCH_HAVE_ONEDNN ON)
  message(STATUS "oneDNN: ${dnnl_VERSION}")
else()
  set(NKBENCH_HAVE_ONEDNN OFF)
  message(WARNING "oneDNN not found: the onednn backend will report every case as skipped")
endif()
