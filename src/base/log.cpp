#include "base/log.hpp"

#include <syslog.h>

#include <atomic>
#include <cstdio>

namespace mavswitch::log {
namespace {
std::atomic<bool> g_syslog{false};
constexpr const char* kNames[] = {"error", "warning", "info", "debug", "trace"};
constexpr int kPriorities[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG, LOG_DEBUG};
}  // namespace

namespace detail {
std::atomic<Level> g_level{Level::kInfo};
}

void set_level(Level l) noexcept { detail::g_level = l; }

bool parse_level(std::string_view text, Level* out) noexcept {
  for (int i = 0; i < 5; ++i) {
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

void use_syslog() noexcept {
  openlog("mavswitchd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
  g_syslog = true;
}

void write(Level l, std::string_view message) {
  const int i = static_cast<int>(l);
  if (g_syslog.load(std::memory_order_relaxed)) {
    syslog(kPriorities[i], "%s: %.*s", kNames[i], static_cast<int>(message.size()), message.data());
    return;
  }
  fmt::print(stderr, "mavswitchd: {}: {}\n", kNames[i], message);
}

}  // namespace mavswitch::log
