#include "base/log.hpp"

#include <syslog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>

#include "base/utf8.hpp"

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

// A line may carry a peer's bytes (a name, a text): control bytes and bytes that are not UTF-8
// are written as \xNN, so that no peer can forge a line, move the cursor or break a log reader.
std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = utf8::sequence_length(text, i);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F) && c != '\t')) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

void write(Level l, std::string_view raw) {
  const int i = static_cast<int>(l);
  const std::string message = printable(raw);
  // relaxed: a setting; a change takes effect a line later at worst.
  if (g_syslog.load(std::memory_order_relaxed)) {
    syslog(kPriorities[i], "%s: %.*s", kNames[i], static_cast<int>(message.size()), message.data());
    return;
  }
  fmt::print(stderr, "mavswitchd: {}: {}\n", kNames[i], message);
}

}  // namespace mavswitch::log

namespace mavswitch::log {

bool Repeats::say(Level level, std::string_view cause, std::string_view line) {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  return say_at(level, cause, line, std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
}

bool Repeats::say_at(Level level, std::string_view cause, std::string_view line, int64_t now_ms, Throttle* gate) {
  auto it = std::find_if(seen_.begin(), seen_.end(), [&](const Seen& s) { return s.cause == cause; });
  if (it != seen_.end() && now_ms - it->said_at < kEveryMs) {
    ++it->unsaid;
    return false;
  }
  if (gate != nullptr && gate->admit(now_ms) == Throttle::kRefused) {
    if (it != seen_.end()) ++it->unsaid;  // a new cause is not remembered: it comes anew next time
    return false;
  }
  if (it == seen_.end()) {
    if (seen_.size() >= kCauses) seen_.erase(seen_.begin());  // the oldest said
    seen_.push_back({std::string(cause), now_ms, 0});
    write(level, line);
    return true;
  }
  write(level, it->unsaid == 0 ? std::string(line)
                               : fmt::format("{} ({} more times in the last {} s)", line, it->unsaid,
                                             (now_ms - it->said_at) / 1000));
  it->said_at = now_ms;
  it->unsaid = 0;
  return true;
}

void Repeats::clear(std::string_view cause) {
  std::erase_if(seen_, [&](const Seen& s) { return s.cause == cause; });
}

int64_t Throttle::now_ms() noexcept {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
}

uint64_t Throttle::admit(int64_t now_ms) {
  std::lock_guard lock(mutex_);
  if (!started_ || now_ms - window_start_ >= kWindowMs) window_start_ = now_ms, written_ = 0, started_ = true;
  if (written_ == kLines) {
    ++unsaid_, ++held_total_;
    return kRefused;
  }
  ++written_;
  const uint64_t held = unsaid_;
  unsaid_ = 0;
  return held;
}

uint64_t Throttle::held_back() const {
  std::lock_guard lock(mutex_);
  return held_total_;
}

}  // namespace mavswitch::log
