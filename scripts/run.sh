#!/usr/bin/env bash
# Sets up, builds and runs the router, mavswitchd, in the foreground (Ctrl-C stops it).
# With no arguments it runs the default QGroundControl users expect: it sends to a ground
# station on this machine (a UDP client to 127.0.0.1:14550, as mavlink-router's examples do), and
# takes whatever dials in on the TCP server (5760) and a UDP server (0.0.0.0:14551); statistics
# every 10 s when something moved. Any arguments replace that, e.g.:
#   bash scripts/run.sh /dev/ttyACM0:57600 -e 192.168.1.20:14550
#   bash scripts/run.sh -c /etc/mavlink-router/main.conf
# An existing build is reused as it was configured; only the daemon is built if it is missing or
# out of date (the tests and benchmarks are the test command's).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
MAVSWITCH_TARGETS=mavswitchd bash scripts/build.sh
if [ $# -eq 0 ]; then
  set -- -e 127.0.0.1:14550 -t 5760 0.0.0.0:14551 -r
fi
exec build/src/daemon/mavswitchd "$@"
