# Writes OUT, a header with the commit this build is of (MAVSWITCH_SHA) and that commit's date
# (MAVSWITCH_BUILD_DATE: the source's date, so that two builds of one commit are the same file).
# Run at every build; the header is only rewritten when the commit changed.
execute_process(COMMAND git -C "${SOURCE_DIR}" log -1 --format=%H%n%cI
                OUTPUT_VARIABLE head ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed)
set(sha "unknown")
set(date "unknown")
if(NOT failed AND head MATCHES "^([0-9a-f]+)\n(.+)$")
  set(sha "${CMAKE_MATCH_1}")
  set(date "${CMAKE_MATCH_2}")
endif()
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  string(TIMESTAMP date "%Y-%m-%dT%H:%M:%SZ" UTC)  # honours SOURCE_DATE_EPOCH
endif()
file(CONFIGURE OUTPUT "${OUT}" CONTENT "#pragma once
#define MAVSWITCH_SHA \"${sha}\"
#define MAVSWITCH_BUILD_DATE \"${date}\"
")
