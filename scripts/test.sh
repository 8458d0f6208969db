#!/usr/bin/env bash
# Sets up, builds and runs every test: unit tests, tool tests and interop with node-mavlink.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
(cd tests/interop && npm ci --no-audit --no-fund --loglevel=error)
ctest --test-dir build --output-on-failure --timeout 300 -j2

# ThreadSanitizer: the router, daemon and API end-to-end tests again (they exercise every
# thread crossing), in a build of their own. MAVSWITCH_SKIP_TSAN=1 skips this pass.
if [ "${MAVSWITCH_SKIP_TSAN:-0}" != 1 ]; then
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMAVSWITCH_SANITIZE=thread \
        -DMAVSWITCH_WERROR="${MAVSWITCH_WERROR:-OFF}" -DMAVSWITCH_BUILD_BENCH=OFF -DMAVSWITCH_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build build-tsan --target mavswitch_e2e_tests mavswitchd mavswitch_cli
  TSAN_OPTIONS="halt_on_error=1" ctest --test-dir build-tsan -L e2e --output-on-failure --timeout 300
fi
