#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for a bounded time.
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 20 s, every target)
# A crash or leak stops it with the reproducer path; turn that input into a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(frame_parser_fuzz signature_fuzz dialect_loader_fuzz config_fuzz routing_fuzz log_stream_fuzz vehicle_data_fuzz
                                    services_fuzz http_api_fuzz fabric_fuzz)

# The same build directory as the AddressSanitizer pass of scripts/test.sh (tests on, only these built).
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DMAVSWITCH_FUZZ=ON -DMAVSWITCH_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz --target "${targets[@]}"

# Seeds: real traffic (the captures node-mavlink ships, installed by scripts/test.sh) cut into
# 1 KiB pieces, the smaller official XML files, our configs.
definitions=""
for d in "${MAVSWITCH_MAVLINK_DIR:-}" third_party/mavlink ../shared/mavlink; do  # the build's search order
  if [ -n "$d" ] && [ -f "$d/message_definitions/v1.0/common.xml" ]; then definitions=$d/message_definitions/v1.0; break; fi
done
seeds=build-fuzz/seeds
rm -rf "$seeds" && mkdir -p "$seeds/frames" "$seeds/xml" "$seeds/config" "$seeds/services" "$seeds/http_api" "$seeds/fabric"
for capture in tests/interop/node_modules/node-mavlink/examples/*.bin; do
  [ -f "$capture" ] && split -b 1024 "$capture" "$seeds/frames/$(basename "$capture" .bin)-"
done
for xml in minimal standard test python_array_test icarous uAvionix; do
  [ -f "$definitions/$xml.xml" ] && cp "$definitions/$xml.xml" "$seeds/xml/"
done
cp fuzz/corpus/config/* "$seeds/config/"
cp fuzz/corpus/services/* "$seeds/services/"  # an exchange's first bytes; a .plan, WPL, .param
cp fuzz/corpus/http_api/* "$seeds/http_api/"  # requests without the token

# One target a core: libFuzzer runs on one thread, and the time per target is fixed.
run_target() {
  local t=$1 seed max_len
  case $t in
    frame_parser_fuzz | signature_fuzz | routing_fuzz | log_stream_fuzz | vehicle_data_fuzz) seed=$seeds/frames max_len=4096 ;;
    dialect_loader_fuzz) seed=$seeds/xml max_len=65536 ;;
    config_fuzz) seed=$seeds/config max_len=4096 ;;
    services_fuzz) seed=$seeds/services max_len=8192 ;;
    http_api_fuzz) seed=$seeds/http_api max_len=2048 ;;
    fabric_fuzz) seed=$seeds/fabric max_len=2048 ;;  # no seeds: its input is choices from the first byte
  esac
  mkdir -p "build-fuzz/corpus/$t"
  "build-fuzz/fuzz/$t" "build-fuzz/corpus/$t" "$seed" -max_total_time="$seconds" -max_len=$max_len \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="build-fuzz/$t-" \
      >"build-fuzz/$t.log" 2>&1
}
jobs_at_once=$(nproc 2>/dev/null || echo 1)
failed=0
for ((first = 0; first < ${#targets[@]}; first += jobs_at_once)); do
  batch=("${targets[@]:first:jobs_at_once}")
  pids=()
  for t in "${batch[@]}"; do
    echo "fuzz: $t for ${seconds}s"
    run_target "$t" &
    pids+=($!)
  done
  for i in "${!batch[@]}"; do
    t=${batch[$i]}
    status=0
    wait "${pids[$i]}" || status=$?
    grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY|artifact_prefix|Test unit written)' \
        "build-fuzz/$t.log" || true
    if [ "$status" -ne 0 ]; then
      tail -40 "build-fuzz/$t.log"
      echo "fuzz: $t failed (exit $status)"
      failed=$((failed + 1))
    fi
  done
  [ "$failed" -eq 0 ] || exit 1
done
echo "fuzz: ${#targets[@]} passed, 0 failed"
