#!/usr/bin/env bash
# Vehicle services against ArduPilot SITL on TCP loopback (no loss): a log downloaded by the log
# protocol (its throughput, and its share of the bytes the vehicle's link carried meanwhile),
# and a 1 MiB file read by MAVFTP (mavswitchd's RSS before and at most during the read, for a
# client that reads at once and for one that reads at 64 KiB/s); then 200 KB of the log over a
# 57,600-baud budget between two routers (its share of the budget and of the bytes carried).
#   bench/vehicle_services.sh            (BUILD=build, SITL=../shared/sitl/start.sh, INSTANCE=18)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
sitl=${SITL:-../shared/sitl/start.sh}
instance=${INSTANCE:-18}
[ -x "$sitl" ] || { echo "needs ArduPilot SITL: $sitl" >&2; exit 2; }
dir=$(mktemp -d -t mavswitch-services-XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
printf 'LOG_DISARMED 1\n' > "$dir/site.parm"
token=services-bench-token-0123456789
printf '%s\n' "$token" > "$dir/token" && chmod 600 "$dir/token"
port=$((5760 + 10 * instance)) http=18${instance}9
SITL_DEFAULTS="$dir/site.parm" "$sitl" "$instance" "$dir/sitl" > /dev/null 2>&1 & pids+=($!)
printf '[General]\nTcpServerPort = 0\n[TcpEndpoint sitl]\nAddress = 127.0.0.1\nPort = %s\n[Http]\nTokenFile = %s\n' \
  "$port" "$dir/token" > "$dir/main.conf"
"$build/src/daemon/mavswitchd" -c "$dir/main.conf" --http "127.0.0.1:$http" 2> "$dir/d.log" & pids+=($!)
router=$!
url=http://127.0.0.1:$http/v1/vehicles/1/1
for _ in $(seq 60); do curl -sf "$url/../../mavlink/vehicles/1/components/1/messages/HEARTBEAT" > /dev/null && break; sleep 0.5; done
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
rx_bytes() { curl -s "http://127.0.0.1:$http/api/v1/links" | json "[l['rx_bytes'] for l in d['links'] if l['endpoint']=='sitl'][0]"; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$router/status"; }

# The log: what ArduPilot has written after 20 s of logging from boot.
sleep 20
id=$(curl -s "$url/logs" | json "d['logs'][-1]['id']")
before=$(rx_bytes) start=$(date +%s.%N)
size=$(curl -s -o "$dir/log.bin" -w '%{size_download}' "$url/logs/$id")
end=$(date +%s.%N) after=$(rx_bytes)
python3 -c "s=$size; t=$end-$start; b=$after-$before; print(f'log {s} bytes in {t:.2f} s: {s/t/1024:.1f} KiB/s; the link carried {b} bytes meanwhile: the log is {100*s/b:.1f}% of them')"

# MAVFTP: a 1 MiB file written, then read (RSS sampled every 20 ms during each read).
head -c 1048576 /dev/urandom > "$dir/one.bin"
curl -s -o /dev/null -X PUT -H "Authorization: Bearer $token" --data-binary @"$dir/one.bin" "$url/files/bench-1mib.bin"
for limit in 0 64k; do
  base=$(rss) max=$base
  start=$(date +%s.%N)
  if [ "$limit" = 0 ]; then curl -s -o "$dir/back.bin" "$url/files/bench-1mib.bin" & else curl -s --limit-rate "$limit" -o "$dir/back.bin" "$url/files/bench-1mib.bin" & fi
  reader=$!
  while kill -0 "$reader" 2> /dev/null; do r=$(rss); [ "$r" -gt "$max" ] && max=$r; sleep 0.02; done
  end=$(date +%s.%N)
  cmp -s "$dir/one.bin" "$dir/back.bin" && same=equal || same=DIFFERENT
  python3 -c "t=$end-$start; print(f'MAVFTP 1 MiB read (client limit $limit) in {t:.2f} s, {1024/t:.0f} KiB/s, $same; RSS $base KiB before, at most $max KiB (+{$max-$base} KiB)')"
done
curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $token" "$url/files/bench-1mib.bin"

# The same log over a 57,600-baud radio: router A reaches SITL (its second serial port) and sends
# to router B at most 57,600 baud (MaxRate, with its priorities; B answers at the same rate), and
# the log is read through B. Its share of what the budget allows, and of what B received.
bport=$((20000 + RANDOM % 20000)) bhttp=18${instance}8
printf '[General]\nTcpServerPort = %s\nTcpServerMaxRate = 57600baud\n[Http]\nTokenFile = %s\n' "$bport" "$dir/token" > "$dir/b.conf"
"$build/src/daemon/mavswitchd" -c "$dir/b.conf" --http "127.0.0.1:$bhttp" 2> "$dir/b.log" & pids+=($!)
printf '[General]\nTcpServerPort = 0\nLogWriterSystemId = 250\n[TcpEndpoint sitl]\nAddress = 127.0.0.1\nPort = %s\n[TcpEndpoint radio]\nAddress = 127.0.0.1\nPort = %s\nMaxRate = 57600baud\n' \
  "$((port + 2))" "$bport" > "$dir/a.conf"
"$build/src/daemon/mavswitchd" -c "$dir/a.conf" --http 0 2> "$dir/a.log" & pids+=($!)
burl=http://127.0.0.1:$bhttp
for _ in $(seq 60); do curl -sf "$burl/v1/mavlink/vehicles/1/components/1/messages/HEARTBEAT" > /dev/null && break; sleep 0.5; done
b_rx() { curl -s "$burl/api/v1/links" | json "sum(l['rx_bytes'] for l in d['links'] if l['endpoint']!='sitl')"; }
before=$(b_rx) start=$(date +%s.%N)
size=$(curl -s -m 600 -o "$dir/radio.bin" -w '%{size_download}' -r 0-199999 "$burl/v1/vehicles/1/1/logs/$id")
end=$(date +%s.%N) after=$(b_rx)
cmp -s -n "$size" "$dir/radio.bin" "$dir/log.bin" && same=equal || same=DIFFERENT
python3 -c "s=$size; t=$end-$start; b=$after-$before; print(f'log over 57,600 baud (5,760 B/s): {s} bytes in {t:.1f} s: {s/t:.0f} B/s, {100*s/t/5760:.0f}% of the budget; B received {b} bytes meanwhile ({b/t:.0f} B/s), the log {100*s/b:.0f}% of them; $same')"
