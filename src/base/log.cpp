#include "base/log.hpp"

#include <atomic>
#include <cstdio>

namespace mavswitch::log {
namespace {
std::atomic<Level> g_level{Level::kInfo};
constexpr const char* kNames[] = {"error", "warning", "info", "debug"};
}  // namespace

void set_level(Level l) noexcept { g_level = l; }
Level level() noexcept { return g_level; }

bool parse_level(std::string_view text, Level* out) noexcept {
  for (int i = 0; i < 4; ++i) {
    if (text.size() == std::string_view(kNames[i]).size()) {
      bool same = true;
      for (size_t k = 0; k < text.size(); ++k) same &= (text[k] | 0x20) == kNames[i][k];
      if (same) {
        *out = static_cast<Level>(i);
        return true;
      }
    }
  }
  return false;
}

void write(Level l, std::string_view message) {
  fmt::print(stderr, "mavswitchd: {}: {}\n", kNames[static_cast<int>(l)], message);
}

}  // namespace mavswitch::log
