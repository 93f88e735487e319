# What the harness libraries (harness/, reference/) build with: included by the
# main project and by the fuzz project (fuzz/).

# Warnings for our own code; third-party headers come in as SYSTEM includes.
add_library(nk_warnings INTERFACE)
target_compile_options(nk_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)

find_package(fmt REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(benchmark REQUIRED)
