#!/usr/bin/env bash
# Sets up, builds and runs every test: unit, end-to-end and interop tests; then the end-to-end
# tests again under ThreadSanitizer, the whole suite under AddressSanitizer + UBSan, and each
# fuzz target for a bounded time. MAVSWITCH_QUICK=1 runs the first pass only.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
(cd tests/interop && npm ci --no-audit --no-fund --loglevel=error)
ctest --test-dir build --output-on-failure --timeout 300 -j2

[ "${MAVSWITCH_QUICK:-0}" = 1 ] && exit 0

# ThreadSanitizer: the router, daemon and API end-to-end tests again (they exercise every
# thread crossing), and the unit tests (the lock-free structures), in a build of their own.
{
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMAVSWITCH_SANITIZE=thread \
        -DMAVSWITCH_WERROR="${MAVSWITCH_WERROR:-OFF}" -DMAVSWITCH_BUILD_BENCH=OFF -DMAVSWITCH_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build build-tsan --target mavswitch_e2e_tests mavswitch_unit_tests mavswitchd mavswitch_cli
  TSAN_OPTIONS="halt_on_error=1" ctest --test-dir build-tsan -L e2e --output-on-failure --timeout 300
  TSAN_OPTIONS="halt_on_error=1" build-tsan/tests/mavswitch_unit_tests --gtest_brief=1
}

# AddressSanitizer + UndefinedBehaviorSanitizer: every test.
{
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMAVSWITCH_SANITIZE=address,undefined \
        -DMAVSWITCH_WERROR="${MAVSWITCH_WERROR:-OFF}" -DMAVSWITCH_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan
  ASAN_OPTIONS="detect_leaks=1" ctest --test-dir build-asan --output-on-failure --timeout 300 -j2
}

# libFuzzer: every target, bounded in time (the long runs are in docs/FUZZING.md).
bash scripts/fuzz.sh "${MAVSWITCH_FUZZ_SECONDS:-15}"
