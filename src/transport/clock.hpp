// Monotonic milliseconds: the one clock the data path reads.
#pragma once

#include <time.h>

#include <cstdint>

namespace mavswitch::transport {

using Millis = int64_t;

inline Millis now_ms() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Millis>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

// Monotonic microseconds, where milliseconds are too coarse (rate limits).
inline int64_t now_us() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

}  // namespace mavswitch::transport
