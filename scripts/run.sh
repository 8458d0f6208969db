#!/usr/bin/env bash
# Sets up, builds and runs mavswitch on a sensible default: until the router daemon lands, the
# main job is decoding MAVLink, so this decodes a real recorded stream (or the file you name).
#   bash scripts/run.sh [FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
input="${1:-../shared/captures/GH-5.bin}"
if [ ! -e "$input" ] && [ "$input" != "-" ]; then
  echo "run: $input not found; name a raw MAVLink stream or a .tlog: bash scripts/run.sh FILE" >&2
  exit 1
fi
exec build/src/tools/mavswitch dump "$input"
