#!/usr/bin/env bash
# Configures and builds mavswitch (Release) into ./build. Extra arguments go to cmake.
# MAVSWITCH_WERROR=ON turns warnings into errors (CI does).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DMAVSWITCH_WERROR="${MAVSWITCH_WERROR:-OFF}" "$@" >/dev/null
cmake --build build
