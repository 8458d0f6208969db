// Leveled logging to stderr ("mavswitchd: warning: ...") or to syslog: error, warning, info,
// debug, and trace (every routing decision: for finding out where a frame went, not for a
// router in service).
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace mavswitch::log {

enum class Level { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

namespace detail {
extern std::atomic<Level> g_level;
}
void set_level(Level level) noexcept;
// relaxed: a setting; a change takes effect a line later at worst.
inline Level level() noexcept { return detail::g_level.load(std::memory_order_relaxed); }
inline bool tracing() noexcept { return level() >= Level::kTrace; }  // one load: fine per frame
// From now on to syslog (facility daemon, tagged mavswitchd), not stderr.
void use_syslog() noexcept;
bool parse_level(std::string_view text, Level* out) noexcept;
void write(Level level, std::string_view message);
// The text as a line shows it: control bytes and bytes that are not UTF-8 as \xNN.
std::string printable(std::string_view text);

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

class Throttle;

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
  // With a gate, a line due here is written only if the gate admits it too; one it refuses stays
  // due (and counted). So lines held back here never use up the gate's few a second.
  bool say_at(Level level, std::string_view cause, std::string_view line, int64_t now_ms, Throttle* gate = nullptr);
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

namespace mavswitch::log {

// A line that a peer or a client can cause (a new UDP peer, a rate request nobody answers, a
// request that failed): at most kLines of it a second, each place its own Throttle; the first
// line after a held-back stretch says how many were held back. Any thread (one mutex, taken
// only when the level lets the line through).
class Throttle {
 public:
  static constexpr int kLines = 5;
  static constexpr int64_t kWindowMs = 1000;

  template <class... Args>
  void line(Level at, fmt::format_string<Args...> f, Args&&... args) {
    line_at(now_ms(), at, f, std::forward<Args>(args)...);
  }
  // The same, at a time the caller's clock gives (a loop's, a test's).
  template <class... Args>
  void line_at(int64_t now, Level at, fmt::format_string<Args...> f, Args&&... args) {
    if (level() < at) return;
    const uint64_t held = admit(now);
    if (held == kRefused) return;
    std::string text = fmt::format(f, std::forward<Args>(args)...);
    if (held > 0) text += fmt::format(" ({} lines like this held back)", held);
    write(at, text);
  }
  // Whether a line may be written at now_ms: kRefused (counted), or how many were held back since
  // the last one written. Tests call it with their own clock.
  static constexpr uint64_t kRefused = ~uint64_t{0};
  uint64_t admit(int64_t now_ms);
  uint64_t held_back() const;  // in all

 private:
  static int64_t now_ms() noexcept;
  mutable std::mutex mutex_;
  int64_t window_start_ = 0;
  bool started_ = false;  // window_start_ holds a time
  int written_ = 0;
  uint64_t unsaid_ = 0;
  uint64_t held_total_ = 0;
};

}  // namespace mavswitch::log
