#!/usr/bin/env bash
# Installs what mavswitch needs to build and test, from Debian's packages (and, for the interop
# tests, node-mavlink from npm). Safe to run again: it installs only what is missing.
# Run as root, or as a user with sudo. With --tests, also what the tests run against.
set -euo pipefail

packages=(g++ cmake ninja-build pkg-config libexpat1-dev libfmt-dev libcli11-dev libssl-dev libgtest-dev libbenchmark-dev
          libwebsockets-dev libcurl4-openssl-dev nlohmann-json3-dev libnats-dev libre2-dev dpkg-dev clang libclang-rt-dev clang-format git python3-numpy)
# --tests: the real servers and browser the tests start and query (Prometheus and promtool,
# Chromium for the status page, nats-server for the fleet fabric's cluster; lintian and
# systemd-analyze for the Debian package).
[ "${1:-}" = "--tests" ] && packages+=(prometheus chromium openssl nats-server lintian systemd procps)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The official MAVLink XML: the submodule, unless definitions are already at hand
# (MAVSWITCH_MAVLINK_DIR, or ../shared/mavlink on the project's machines).
cd "$(dirname "$0")/.."
if [ -z "${MAVSWITCH_MAVLINK_DIR:-}" ] && [ ! -f third_party/mavlink/message_definitions/v1.0/common.xml ] &&
   [ ! -f ../shared/mavlink/message_definitions/v1.0/common.xml ]; then
  command -v git >/dev/null 2>&1 || { [ "$(id -u)" -eq 0 ] && apt-get install -y -qq git >/dev/null; }
  git submodule update --init --depth 1 third_party/mavlink ||
    echo "setup: could not fetch third_party/mavlink; set MAVSWITCH_MAVLINK_DIR to a mavlink checkout" >&2
fi
