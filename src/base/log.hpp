// Leveled logging to stderr ("mavswitchd: warning: ..."): error, warning, info, debug.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace mavswitch::log {

enum class Level { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

void set_level(Level level) noexcept;
Level level() noexcept;
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

}  // namespace mavswitch::log
