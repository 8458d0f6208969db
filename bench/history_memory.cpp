// What the window's history holds at its bounds: 100 vehicles with a full 15-minute track and
// 100 STATUSTEXT lines of the longest kind each, and 64 links with 15 minutes of seconds. Prints
// the heap in use (mallinfo2) and the process's RSS before and after (bench/run history).
#include <malloc.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "window/history.hpp"
#include "window/status_text_history.hpp"

namespace {

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

}  // namespace

int main() {
  using mavswitch::window::History;
  using mavswitch::window::StatusTextHistory;
  const size_t heap_before = mallinfo2().uordblks;
  const long rss_before = rss_kib();
  {
    History history;
    StatusTextHistory said;
    constexpr int kVehicles = 100;
    for (int64_t s = 0; s < int64_t(History::kSeconds); ++s) {
      for (int v = 1; v <= kVehicles; ++v) history.position(uint8_t(v), {s * 1000, int32_t(s), int32_t(v), 1000});
      std::vector<History::LinkTotals> links;
      for (int l = 0; l < int(History::kMaxLinks); ++l)
        links.push_back({"udp-server:127.0.0.1:14550 127.0.0.1:" + std::to_string(40000 + l), uint64_t(s) * 50,
                         uint64_t(s) * 50, 0, 0});
      history.links(links, s * 1000);
    }
    const size_t heap_history = mallinfo2().uordblks - heap_before;
    for (int v = 1; v <= kVehicles; ++v) {
      for (size_t n = 0; n < StatusTextHistory::kLinesPerSystem; ++n) {
        for (uint8_t chunk = 0; chunk < StatusTextHistory::kMaxChunks; ++chunk) {
          mavswitch::msg::Statustext m;
          m.severity = 6;
          m.id = uint16_t(n + 1);
          m.chunk_seq = chunk;
          m.text.fill('x');  // every chunk full: the line goes on, to the longest kept
          said.add(uint8_t(v), 1, m, int64_t(n));
        }
      }
    }
    const size_t heap = mallinfo2().uordblks - heap_before;
    std::printf(
        "history at its bounds: %d vehicles (tracks %zu points, %zu STATUSTEXT lines of %zu characters), "
        "%zu links (%zu seconds)\n",
        kVehicles, History::kSeconds, StatusTextHistory::kLinesPerSystem, StatusTextHistory::kMaxChunks * 50,
        History::kMaxLinks, History::kSeconds);
    std::printf(
        "heap in use: %.2f MiB (tracks and link seconds %.2f, STATUSTEXT %.2f); RSS %ld -> %ld KiB (+%.2f MiB)\n",
        double(heap) / (1 << 20), double(heap_history) / (1 << 20), double(heap - heap_history) / (1 << 20), rss_before,
        rss_kib(), double(rss_kib() - rss_before) / 1024);
  }
}
