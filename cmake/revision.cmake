# Run at every build (cmake -P): writes OUT, a header defining JOINERY_GIT_REVISION_AT_BUILD as the
# source tree's short git revision ("+dirty" when the tree differs from it), and rewrites it only
# when that changed, so that only its includers rebuild. Benchmarks record it where they run
# without git (a lent GPU machine gets a copy of the tree); a configure-time value went stale.
execute_process(COMMAND git rev-parse --short HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR rev STREQUAL "")
  set(rev "unknown")
else()
  execute_process(COMMAND git diff --quiet HEAD -- WORKING_DIRECTORY ${SRC}
                  RESULT_VARIABLE dirty OUTPUT_QUIET ERROR_QUIET)
  if(NOT dirty EQUAL 0)
    string(APPEND rev "+dirty")
  endif()
endif()
set(text "#pragma once\n#define JOINERY_GIT_REVISION_AT_BUILD \"${rev}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
