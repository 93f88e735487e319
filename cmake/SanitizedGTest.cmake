# GoogleTest for the NKBENCH_SANITIZE build: built here from Debian's sources
# (package googletest, /usr/src/googletest) with the sanitizer flags, instead of
# Debian's prebuilt libgtest.a. That one is built without libstdc++'s vector
# annotations: InitGoogleTest fills a vector<string> in its own code, which leaves
# the new elements marked as spare capacity, and when the annotated copy of
# vector's code in a test binary grows it, ASan reports a container-overflow that
# is not there. Built with the same flags, every part of that vector agrees.
set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
add_subdirectory(/usr/src/googletest ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
# Its headers as system headers, as find_package(GTest) gives them.
foreach(target gtest gtest_main)
  get_target_property(include_dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  set_target_properties(${target} PROPERTIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${include_dirs}")
endforeach()
