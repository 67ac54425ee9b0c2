# The include graph against the layering rules of docs/DESIGN.md ("Layering rules"): each folder
# of src/ includes only the folders listed for it; public headers include only public headers;
# the CLI's subcommands only the public API (its benchmark drivers may reach internals).
#   cmake -DROOT=<source dir> -P tests/layering/check_layering.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT ROOT)
  message(FATAL_ERROR "pass -DROOT=<source dir>")
endif()

set(layers core primitives cpu strings logical join groupby io gen)
set(may_include_core core)
set(may_include_primitives core primitives)
set(may_include_cpu core cpu)
set(may_include_strings core primitives strings)
set(may_include_logical core primitives logical)
set(may_include_join core primitives cpu strings logical join)
set(may_include_groupby core primitives cpu strings logical groupby)
set(may_include_io core io)
set(may_include_gen core gen)

set(violations "")
foreach(layer IN LISTS layers)
  file(GLOB_RECURSE files "${ROOT}/src/${layer}/*.hpp" "${ROOT}/src/${layer}/*.cpp"
       "${ROOT}/src/${layer}/*.cu" "${ROOT}/src/${layer}/*.cuh")
  foreach(f IN LISTS files)
    file(STRINGS "${f}" lines REGEX "^#include \"[a-z_]+/")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" target "${line}")
      if(NOT target IN_LIST may_include_${layer})
        file(RELATIVE_PATH rel "${ROOT}" "${f}")
        list(APPEND violations "${rel}: ${line} (src/${layer} may include: ${may_include_${layer}})")
      endif()
    endforeach()
  endforeach()
endforeach()

# Public headers: host-only, public includes only.
file(GLOB_RECURSE public "${ROOT}/include/joinery/*.hpp")
foreach(f IN LISTS public)
  file(STRINGS "${f}" lines REGEX "^#include (\"|<(cuda|cub|thrust|cuda_runtime))")
  foreach(line IN LISTS lines)
    file(RELATIVE_PATH rel "${ROOT}" "${f}")
    list(APPEND violations "${rel}: ${line} (public headers include <joinery/...> and the standard library)")
  endforeach()
endforeach()

# The CLI's subcommands: the public API and the CLI's own headers; the benchmark drivers
# (bench_*, cmd_bench.cpp, timing.*) may use internals: tuning for A/B runs, CUDA events.
file(GLOB cli "${ROOT}/tools/joinery/*.cpp" "${ROOT}/tools/joinery/*.hpp")
foreach(f IN LISTS cli)
  get_filename_component(name "${f}" NAME)
  if(name MATCHES "^(bench_|timing\\.)" OR name STREQUAL "cmd_bench.cpp")
    continue()
  endif()
  file(STRINGS "${f}" lines REGEX "^#include \"[a-z_]+/")
  foreach(line IN LISTS lines)
    file(RELATIVE_PATH rel "${ROOT}" "${f}")
    list(APPEND violations "${rel}: ${line} (the CLI uses the public API)")
  endforeach()
endforeach()

list(LENGTH violations n)
if(n GREATER 0)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "layering: ${n} include(s) against docs/DESIGN.md's rules:\n  ${text}")
endif()
message(STATUS "layering: every include follows docs/DESIGN.md's rules")
