// Parse + validate throughput on real captures looped in memory, and CRC alone.
//   build/bench/parse_bench [--benchmark_repetitions=5 --benchmark_report_aggregates_only=true]
// Set MAVSWITCH_CAPTURES_DIR to read the captures from elsewhere.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "dialect/builtin.hpp"
#include "protocol/crc.hpp"
#include "protocol/parser.hpp"

using namespace mavswitch;

namespace {

std::vector<uint8_t> capture(const std::string& name) {
  const char* dir = std::getenv("MAVSWITCH_CAPTURES_DIR");
  const std::string path = std::string(dir ? dir : MAVSWITCH_CAPTURES_DIR) + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The capture repeated to about 1 MiB: bigger than L2, as a busy router's input would be.
std::vector<uint8_t> looped(const std::string& name) {
  const auto one = capture(name);
  std::vector<uint8_t> data;
  while (data.size() < (1u << 20)) data.insert(data.end(), one.begin(), one.end());
  return data;
}

void parse(benchmark::State& state, const std::string& name, size_t chunk) {
  const auto data = looped(name);
  protocol::FrameParser parser(dialect::builtin::message_table());
  uint64_t frames = 0;
  uint64_t sum = 0;
  auto sink = [&](const protocol::FrameView& f) {
    ++frames;
    sum += f.msgid();  // touch the frame, as any consumer would
  };
  for (auto _ : state) {
    for (size_t pos = 0; pos < data.size(); pos += chunk) {
      parser.feed({data.data() + pos, std::min(chunk, data.size() - pos)}, sink);
    }
    parser.flush(sink);
  }
  benchmark::DoNotOptimize(sum);
  if (parser.stats().crc_failures != 0) state.SkipWithError("CRC failures in a clean capture");
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(data.size()));
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(frames), benchmark::Counter::kIsRate);
}

void BM_ParseV2Capture_64KiBReads(benchmark::State& s) { parse(s, "mavlink-v2-3412-packets.bin", 65536); }
void BM_ParseV2Capture_1500BReads(benchmark::State& s) { parse(s, "mavlink-v2-3412-packets.bin", 1500); }
void BM_ParseV2Capture_ByteAtATime(benchmark::State& s) { parse(s, "mavlink-v2-3412-packets.bin", 1); }
void BM_ParseMixedCapture_64KiBReads(benchmark::State& s) { parse(s, "GH-5.bin", 65536); }

void BM_Crc16(benchmark::State& state) {
  std::vector<uint8_t> data(static_cast<size_t>(state.range(0)));
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 131 + 7);
  for (auto _ : state) {
    benchmark::DoNotOptimize(protocol::crc16(data.data(), data.size()));
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(data.size()));
}

void BM_Crc16_Bytewise(benchmark::State& state) {
  std::vector<uint8_t> data(static_cast<size_t>(state.range(0)));
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 131 + 7);
  for (auto _ : state) {
    uint16_t crc = protocol::kCrcInit;
    for (uint8_t b : data) crc = protocol::crc16_accumulate(b, crc);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(data.size()));
}

}  // namespace

BENCHMARK(BM_ParseV2Capture_64KiBReads);
BENCHMARK(BM_ParseV2Capture_1500BReads);
BENCHMARK(BM_ParseV2Capture_ByteAtATime);
BENCHMARK(BM_ParseMixedCapture_64KiBReads);
BENCHMARK(BM_Crc16)->Arg(40)->Arg(65536);
BENCHMARK(BM_Crc16_Bytewise)->Arg(65536);
BENCHMARK_MAIN();
