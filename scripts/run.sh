#!/usr/bin/env bash
# Sets up, builds and runs the router, mavswitchd, in the foreground (Ctrl-C stops it).
# With no arguments it runs a sensible default: a UDP server on 0.0.0.0:14550 (vehicles and
# ground stations send to it; each sender is its own peer), the TCP server on 5760, and
# statistics every 10 s. Any arguments replace that, e.g.:
#   bash scripts/run.sh /dev/ttyACM0:57600 -e 192.168.1.20:14550
#   bash scripts/run.sh -c /etc/mavlink-router/main.conf
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
if [ $# -eq 0 ]; then
  set -- -t 5760 -r 0.0.0.0:14550
fi
exec build/src/daemon/mavswitchd "$@"
