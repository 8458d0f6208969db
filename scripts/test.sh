#!/usr/bin/env bash
# Sets up, builds and runs every test: unit tests, tool tests and interop with node-mavlink.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
(cd tests/interop && npm ci --no-audit --no-fund --loglevel=error)
cd build && ctest --output-on-failure --timeout 300 -j2
