#!/usr/bin/env bash
# Installs mavswitch into a scratch prefix, then builds the examples as a separate project
# against it, twice: with find_package(mavswitch) and with pkg-config.
#   out_of_tree.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/lib/cmake/mavswitch/mavswitchConfig.cmake"
test -f "$work/prefix/include/mavswitch/library/component.hpp"
test -f "$work/prefix/include/mavswitch/mavswitch/msg/heartbeat.hpp"
test -x "$work/prefix/bin/mavswitchd"
# The systemd unit goes under the prefix given at install time and names the program there;
# with DESTDIR (a packager's staging directory) the files land below it, the unit names the
# final path.
grep -qx "ExecStart=$work/prefix/bin/mavswitchd" "$work/prefix/lib/systemd/system/mavswitchd.service"
DESTDIR="$work/stage" cmake --install "$build" --prefix /opt/mavswitch >/dev/null
test -x "$work/stage/opt/mavswitch/bin/mavswitchd"
grep -qx "ExecStart=/opt/mavswitch/bin/mavswitchd" "$work/stage/opt/mavswitch/lib/systemd/system/mavswitchd.service"

# 1. CMake: find_package(mavswitch), exactly as a user's project would.
cp -r "$source/examples" "$work/examples"
cmake -S "$work/examples" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
set +e
"$work/cmake-build/command_sender" >/dev/null 2>&1
status=$?
set -e
test "$status" -eq 2  # ran, printed its usage

# 2. pkg-config.
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
g++ -O1 -o "$work/printer" "$work/examples/telemetry_printer.cpp" -I"$work/examples" \
    $(pkg-config --cflags --libs mavswitch)
set +e
"$work/printer" >/dev/null 2>&1
status=$?
set -e
test "$status" -eq 2
echo "out-of-tree: 4 passed, 0 failed"
