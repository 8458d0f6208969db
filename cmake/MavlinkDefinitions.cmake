# Finds the official MAVLink XML definitions. The project never copies them into git; it looks,
# in order, at:
#   1. -DMAVSWITCH_MAVLINK_DIR=... or the MAVSWITCH_MAVLINK_DIR environment variable,
#   2. the git submodule third_party/mavlink (once populated),
#   3. ../shared/mavlink beside the checkout (present on the project's machines and in CI).
# Each candidate is a checkout of github.com/mavlink/mavlink (it holds message_definitions/v1.0).
set(MAVSWITCH_MAVLINK_DIR "" CACHE PATH "A mavlink/mavlink checkout holding message_definitions/v1.0")

set(_mavlink_candidates "")
if(MAVSWITCH_MAVLINK_DIR)
  list(APPEND _mavlink_candidates "${MAVSWITCH_MAVLINK_DIR}")
elseif(DEFINED ENV{MAVSWITCH_MAVLINK_DIR})
  list(APPEND _mavlink_candidates "$ENV{MAVSWITCH_MAVLINK_DIR}")
endif()
list(APPEND _mavlink_candidates
     "${PROJECT_SOURCE_DIR}/third_party/mavlink"
     "${PROJECT_SOURCE_DIR}/../shared/mavlink")

set(MAVLINK_DEFINITIONS_DIR "")
foreach(_candidate IN LISTS _mavlink_candidates)
  if(EXISTS "${_candidate}/message_definitions/v1.0/common.xml")
    get_filename_component(MAVLINK_DEFINITIONS_DIR "${_candidate}/message_definitions/v1.0" ABSOLUTE)
    break()
  endif()
endforeach()

if(NOT MAVLINK_DEFINITIONS_DIR)
  message(FATAL_ERROR
    "MAVLink message definitions not found (looked in: ${_mavlink_candidates}).\n"
    "Run:  git submodule update --init third_party/mavlink\n"
    "or pass -DMAVSWITCH_MAVLINK_DIR=/path/to/a/mavlink/checkout")
endif()

set(MAVSWITCH_DIALECT_XML "${MAVLINK_DEFINITIONS_DIR}/${MAVSWITCH_DIALECT}.xml")
if(NOT EXISTS "${MAVSWITCH_DIALECT_XML}")
  message(FATAL_ERROR "Dialect '${MAVSWITCH_DIALECT}' not found: ${MAVSWITCH_DIALECT_XML}")
endif()
message(STATUS "MAVLink definitions: ${MAVLINK_DEFINITIONS_DIR} (dialect ${MAVSWITCH_DIALECT})")
