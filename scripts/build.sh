#!/usr/bin/env bash
# Configures and builds mavswitch (Release) into ./build. Extra arguments go to cmake.
# MAVSWITCH_WERROR=ON turns warnings into errors (CI does). An existing build keeps the flags it
# was configured with unless MAVSWITCH_WERROR is set: changing one rebuilds every target.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=()
if [ -n "${MAVSWITCH_WERROR:-}" ] || [ ! -f build/CMakeCache.txt ]; then
  flags+=("-DMAVSWITCH_WERROR=${MAVSWITCH_WERROR:-OFF}")
fi
# Each folder's files are compiled together (CMakeLists.txt says why); MAVSWITCH_UNITY=OFF builds
# file by file.
if [ -n "${MAVSWITCH_UNITY:-}" ]; then flags+=("-DCMAKE_UNITY_BUILD=$MAVSWITCH_UNITY"); fi
cmake -S . -B build -G Ninja "${flags[@]}" "$@" >/dev/null
cmake --build build ${MAVSWITCH_TARGETS:+--target $MAVSWITCH_TARGETS}
