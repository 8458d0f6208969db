#!/usr/bin/env bash
# The Debian package, as a user gets it: cpack -G DEB, unpacked with dpkg -x into a scratch
# root, holds the daemon, the tool, the unit, the status page, the gzipped man pages, a copyright
# file, a changelog and /etc/mavswitch/main.conf as a conffile, with maintainer scripts; lintian
# finds no error in it. The unpacked daemon runs, serves its page from the unpacked files, and the
# unpacked tool reads its status. Then, as root and where no mavswitch is installed, the package
# is installed for real (dpkg -i): its user and token are made, systemd-analyze verifies its unit,
# and the daemon started as the unit starts it (its user and groups, the shipped configuration's
# TokenFile) serves /metrics and takes a change with the token; a purge removes the token.
#   deb.sh BUILD_DIR
set -euo pipefail
build=$1
work=$(mktemp -d)
daemon_pid=
trap '[ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null; rm -rf "$work"' EXIT

cpack -G DEB -B "$work/out" --config "$build/CPackConfig.cmake" >/dev/null
deb=$(ls "$work"/out/mavswitch_*.deb)
dpkg-deb --field "$deb" Depends | grep -q libwebsockets17
dpkg-deb --field "$deb" Depends | grep -q libcurl4
dpkg-deb --field "$deb" Depends | grep -q adduser
dpkg -x "$deb" "$work/root"
dpkg-deb -e "$deb" "$work/control"
root=$work/root
for f in usr/bin/mavswitchd usr/bin/mavswitch; do test -x "$root/$f"; done
for f in usr/lib/systemd/system/mavswitchd.service usr/share/mavswitch/www/index.html usr/share/mavswitch/www/page.js \
         usr/share/man/man1/mavswitchd.1.gz usr/share/man/man1/mavswitch.1.gz usr/share/doc/mavswitch/examples/main.conf \
         usr/share/doc/mavswitch/copyright usr/share/doc/mavswitch/changelog.gz etc/mavswitch/main.conf; do
  test -f "$root/$f" || { echo "missing from the package: $f"; exit 1; }
done
grep -qx "/etc/mavswitch/main.conf" "$work/control/conffiles"
for script in postinst prerm postrm; do test -x "$work/control/$script" || { echo "no $script"; exit 1; }; done
unit=$root/usr/lib/systemd/system/mavswitchd.service
grep -qx "ExecStart=/usr/bin/mavswitchd" "$unit"
grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$unit"
grep -qx "User=mavswitch" "$unit"
grep -qx "TokenFile = /etc/mavswitch/http.token" "$root/etc/mavswitch/main.conf"
zcat "$root/usr/share/man/man1/mavswitchd.1.gz" | grep -q "MAVLink router daemon"

# lintian: no error; its warnings are printed.
if command -v lintian >/dev/null; then
  lintian --tag-display-limit 0 "$deb" >"$work/lintian.txt" 2>/dev/null || true
  if grep -q "^E:" "$work/lintian.txt"; then cat "$work/lintian.txt"; exit 1; fi
  echo "lintian: $(grep -c "^W:" "$work/lintian.txt" || true) warnings"
  grep "^W:" "$work/lintian.txt" || true
else
  echo "SKIP lintian: not installed (Debian's lintian package)"
fi

free_port() { python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, getattr(socket, sys.argv[1])); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' "$1"; }
http=$(free_port SOCK_STREAM)
udp=$(free_port SOCK_DGRAM)
"$root/usr/bin/mavswitchd" -t 0 -g debug --http "127.0.0.1:$http" "127.0.0.1:$udp" 2>"$work/daemon.log" &
daemon_pid=$!
for _ in $(seq 100); do
  "$root/usr/bin/mavswitch" endpoints list --url "http://127.0.0.1:$http" >"$work/endpoints.txt" 2>/dev/null && break
  sleep 0.1
done
grep -q "udp-server udp-server:127.0.0.1:$udp 127.0.0.1:$udp" "$work/endpoints.txt"
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

# Installed for real, as a user installs it: only as root, and never over a mavswitch already
# installed (this machine's own is not ours to replace).
if [ "$(id -u)" != 0 ] || dpkg-query -W -f='${Status}' mavswitch 2>/dev/null | grep -q "installed"; then
  echo "SKIP install: not root, or a mavswitch package is installed here already"
  exit 0
fi
trap '[ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null; dpkg --purge mavswitch >/dev/null 2>&1; rm -rf "$work"' EXIT
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
getent passwd mavswitch >/dev/null || { echo "postinst made no user mavswitch"; exit 1; }
id -nG mavswitch | grep -qw dialout || { echo "mavswitch is not in dialout"; exit 1; }
[ "$(stat -c '%U %a' /etc/mavswitch/http.token)" = "mavswitch 600" ] || { ls -l /etc/mavswitch; exit 1; }
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify /usr/lib/systemd/system/mavswitchd.service 2>"$work/verify.txt" || { cat "$work/verify.txt"; exit 1; }
  echo "systemd-analyze verify: $(wc -l <"$work/verify.txt") lines"
  cat "$work/verify.txt"
else
  echo "SKIP systemd-analyze: not installed (Debian's systemd package)"
fi
# The daemon as the unit starts it: ExecStart, as User= with its groups, on the shipped
# configuration with this test's ports (the shipped one listens on 0.0.0.0:14550 and :5760).
exec_start=$(sed -n 's/^ExecStart=//p' /usr/lib/systemd/system/mavswitchd.service)
user=$(sed -n 's/^User=//p' /usr/lib/systemd/system/mavswitchd.service)
http=$(free_port SOCK_STREAM)
udp=$(free_port SOCK_DGRAM)
sed -e "s/^TcpServerPort = .*/TcpServerPort = 0/" -e "s/^Port = 8080/Port = $http/" \
    -e "s/^Address = 0.0.0.0/Address = 127.0.0.1/" -e "s/^Port = 14550/Port = $udp/" /etc/mavswitch/main.conf >"$work/unit.conf"
chmod 644 "$work/unit.conf"
chmod 755 "$work"
setpriv --reuid="$user" --regid="$user" --init-groups $exec_start -c "$work/unit.conf" 2>"$work/unit.log" &
daemon_pid=$!
metrics=
for _ in $(seq 100); do
  metrics=$(python3 -c 'import sys,urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
            "http://127.0.0.1:$http/metrics" 2>/dev/null) && break
  sleep 0.1
done
echo "$metrics" | grep -q "^mavswitch_build_info" || { echo "no /metrics from the service:"; cat "$work/unit.log"; exit 1; }
other=$(free_port SOCK_DGRAM)
"$root/usr/bin/mavswitch" endpoints add --url "http://127.0.0.1:$http" --token-file /etc/mavswitch/http.token \
  UdpEndpoint added Mode=Server Address=127.0.0.1 "Port=$other" >"$work/add.txt" 2>&1 || \
  { cat "$work/add.txt" "$work/unit.log"; exit 1; }
grep -q "TokenFile" "$work/unit.log" && { cat "$work/unit.log"; exit 1; }
kill "$daemon_pid"
wait "$daemon_pid" || true
daemon_pid=
dpkg --purge mavswitch >/dev/null
[ ! -e /etc/mavswitch/http.token ] || { echo "the purge left the token"; exit 1; }
echo "installed: user $user, token mode 600, the unit verified; the service served /metrics and took a change"
