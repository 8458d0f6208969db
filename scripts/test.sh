#!/usr/bin/env bash
# Sets up, builds and runs every test once: unit, end-to-end, interop and packaging. Then the
# sanitizer passes run what each can catch: ThreadSanitizer the tests that cross threads (every
# end-to-end test, with three I/O workers so that links of one test land on different workers,
# the WebSocket tests, where the window's thread meets the router's, and the unit tests of the
# lock-free structures); AddressSanitizer + UBSan the rest (unit and
# interop tests, built with clang beside the fuzz targets); and each fuzz target for a bounded
# time; then the ARM build under emulation (scripts/cross.sh). MAVSWITCH_QUICK=1 runs the first
# pass only. For a quick check while changing code:
# ctest --test-dir build -L unit.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every build here compiles each folder's files together, as every build does by default (the
# arm64 one in half the time); file by file: MAVSWITCH_UNITY=OFF bash scripts/build.sh.
export MAVSWITCH_UNITY=${MAVSWITCH_UNITY:-ON}
bash scripts/setup.sh --tests
(cd tests/interop && npm ci --no-audit --no-fund --loglevel=error)  # node-mavlink, and the captures it ships
bash scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 300 -j2

[ "${MAVSWITCH_QUICK:-0}" = 1 ] && exit 0

# ThreadSanitizer.
{
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMAVSWITCH_SANITIZE=thread \
        -DCMAKE_UNITY_BUILD="$MAVSWITCH_UNITY" \
        -DMAVSWITCH_WERROR="${MAVSWITCH_WERROR:-OFF}" -DMAVSWITCH_BUILD_BENCH=OFF -DMAVSWITCH_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build build-tsan --target mavswitch_e2e_tests mavswitch_security_tests mavswitch_lockfree_tests mavswitchd mavswitch_cli
  TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/scripts/tsan.supp" MAVSWITCH_TEST_WORKERS=3 \
    ctest --test-dir build-tsan -L 'e2e|security' --output-on-failure --timeout 300 -j2
  # The window's thread against the router's: WebSocket clients (npm ws), 1,000 of them at once.
  TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/scripts/tsan.supp" \
    ctest --test-dir build-tsan -R '^interop[.](websocket_link|window_under_load)' --output-on-failure --timeout 300 -j2
  TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/scripts/tsan.supp" build-tsan/tests/mavswitch_lockfree_tests --gtest_brief=1
}

# AddressSanitizer + UndefinedBehaviorSanitizer: the unit and interop tests, in the clang build
# the fuzz targets use (one build for both: its coverage hooks cost the tests little).
{
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMAVSWITCH_FUZZ=ON \
        -DCMAKE_UNITY_BUILD="$MAVSWITCH_UNITY" \
        -DMAVSWITCH_WERROR="${MAVSWITCH_WERROR:-OFF}" -DMAVSWITCH_BUILD_BENCH=OFF >/dev/null
  cmake --build build-fuzz --target mavswitch_unit_tests mavswitch_lockfree_tests mavswitchd mavswitch_cli interop_encode command_sender telemetry_printer
  # The window under load runs in the first pass and under TSan, and the SITL fleet page in the
  # first (page.mjs drives the same page code here); here they would only take time.
  ASAN_OPTIONS="detect_leaks=1" LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp" \
    ctest --test-dir build-fuzz -L 'unit|interop' -E '^(interop[.]window_under_load|page[.]fleet)' --output-on-failure --timeout 300 -j2
  # The end-to-end and security tests as well with MAVSWITCH_ASAN_E2E=1: about seven minutes more
  # (their build, then four minutes on 2 cores), past CI's budget; run by hand before a release.
  if [ "${MAVSWITCH_ASAN_E2E:-0}" = 1 ]; then
    cmake --build build-fuzz --target mavswitch_e2e_tests mavswitch_security_tests
    ASAN_OPTIONS="detect_leaks=1" LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp" \
      ctest --test-dir build-fuzz -L 'e2e|security' --output-on-failure --timeout 300 -j2
  fi
}

# libFuzzer: every target, bounded in time (the long runs are in docs/FUZZING.md).
bash scripts/fuzz.sh "${MAVSWITCH_FUZZ_SECONDS:-15}"

# 64-bit ARM: the daemon, the tool, the library and the tests cross-built, its .deb made and
# checked by lintian, then the unit tests (the lock-free structures' stress and litmus tests
# among them) and the end-to-end tests of each link kind under qemu-user. armhf the same with
# MAVSWITCH_CROSS="arm64 armhf" (a build as long as arm64's, about 7 minutes on 2 cores, then a
# minute of tests; not in CI's budget).
for arch in ${MAVSWITCH_CROSS:-arm64}; do bash scripts/cross.sh "$arch"; done
