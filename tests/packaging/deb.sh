#!/usr/bin/env bash
# The Debian package, as a user gets it: cpack -G DEB, unpacked with dpkg -x into a scratch
# root, holds the daemon, the tool, the unit, the status page, the man pages and a sample
# configuration; the unpacked daemon runs, serves its page from the unpacked files, and the
# unpacked tool reads its status.
#   deb.sh BUILD_DIR
set -euo pipefail
build=$1
work=$(mktemp -d)
daemon_pid=
trap '[ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null; rm -rf "$work"' EXIT

cpack -G DEB -B "$work/out" --config "$build/CPackConfig.cmake" >/dev/null
deb=$(ls "$work"/out/mavswitch_*.deb)
dpkg-deb --field "$deb" Depends | grep -q libcivetweb1
dpkg -x "$deb" "$work/root"
root=$work/root
for f in usr/bin/mavswitchd usr/bin/mavswitch; do test -x "$root/$f"; done
for f in usr/lib/systemd/system/mavswitchd.service usr/share/mavswitch/www/index.html usr/share/mavswitch/www/page.js \
         usr/share/man/man1/mavswitchd.1 usr/share/man/man1/mavswitch.1 usr/share/doc/mavswitch/examples/main.conf; do
  test -f "$root/$f" || { echo "missing from the package: $f"; exit 1; }
done
grep -qx "ExecStart=/usr/bin/mavswitchd" "$root/usr/lib/systemd/system/mavswitchd.service"
man -l "$root/usr/share/man/man1/mavswitchd.1" 2>/dev/null | grep -q "MAVLink router daemon" || \
  grep -q "MAVLink router daemon" "$root/usr/share/man/man1/mavswitchd.1"

free_port() { python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, getattr(socket, sys.argv[1])); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' "$1"; }
http=$(free_port SOCK_STREAM)
udp=$(free_port SOCK_DGRAM)
"$root/usr/bin/mavswitchd" -t 0 -g debug --http "127.0.0.1:$http" "127.0.0.1:$udp" 2>"$work/daemon.log" &
daemon_pid=$!
for _ in $(seq 100); do
  "$root/usr/bin/mavswitch" endpoints list --url "http://127.0.0.1:$http" >"$work/endpoints.txt" 2>/dev/null && break
  sleep 0.1
done
grep -q "udp-server arg0 127.0.0.1:$udp" "$work/endpoints.txt"
grep -q "the status page from $root/usr/share/mavswitch/www" "$work/daemon.log" || { cat "$work/daemon.log"; exit 1; }
exec 3<>"/dev/tcp/127.0.0.1/$http"
printf 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
grep -q "<title>mavswitch</title>" <&3
exec 3<&-
"$root/usr/bin/mavswitch" status --interval 0 --url "http://127.0.0.1:$http" | grep -q "^LINK"
kill "$daemon_pid"
wait "$daemon_pid"
daemon_pid=
echo "the package: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB; unpacked, its daemon serves its page and routes"
