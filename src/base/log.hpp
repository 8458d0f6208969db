// Leveled logging to stderr ("mavswitchd: warning: ...") or to syslog: error, warning, info,
// debug, and trace (every routing decision: for finding out where a frame went, not for a
// router in service).
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mavswitch::log {

enum class Level { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

namespace detail {
extern std::atomic<Level> g_level;
}
void set_level(Level level) noexcept;
inline Level level() noexcept { return detail::g_level.load(std::memory_order_relaxed); }
inline bool tracing() noexcept { return level() >= Level::kTrace; }  // one load: fine per frame
// From now on to syslog (facility daemon, tagged mavswitchd), not stderr.
void use_syslog() noexcept;
bool parse_level(std::string_view text, Level* out) noexcept;
void write(Level level, std::string_view message);

template <class... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void warning(fmt::format_string<Args...> f, Args&&... args) {
  if (level() >= Level::kWarning) write(Level::kWarning, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (level() >= Level::kInfo) write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (level() >= Level::kDebug) write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void trace(fmt::format_string<Args...> f, Args&&... args) {
  if (tracing()) write(Level::kTrace, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace mavswitch::log

namespace mavswitch::log {

// Trouble that repeats (a log directory that stays unusable, a rotation that keeps failing) is
// said once, then, while it keeps coming, at most once a minute with how often it came meanwhile.
// Keyed by a cause the caller names (the line itself may change: a new file name each time). One
// per owner; not shared between threads. At most kCauses causes are remembered.
class Repeats {
 public:
  static constexpr int64_t kEveryMs = 60'000;
  static constexpr size_t kCauses = 64;

  // Whether it wrote the line.
  bool say(Level level, std::string_view cause, std::string_view line);
  bool say_at(Level level, std::string_view cause, std::string_view line, int64_t now_ms);  // tests
  // The cause is over: its next coming is said at once.
  void clear(std::string_view cause);

 private:
  struct Seen {
    std::string cause;
    int64_t said_at;
    uint64_t unsaid;
  };
  std::vector<Seen> seen_;
};

}  // namespace mavswitch::log
