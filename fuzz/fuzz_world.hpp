// What the fuzz targets that run a router share: the input read as a sequence of choices, and a
// router running on its own thread for the whole run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "router/router.hpp"

namespace mavswitch::fuzz {

// The fuzzer's bytes as choices; past the end, every choice is 0.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() noexcept { return pos_ < size_ ? data_[pos_++] : 0; }
  uint64_t bytes(size_t n) noexcept {  // little-endian, as on the wire
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t(byte()) << (8 * i);
    return v;
  }
  std::string text(size_t most) {  // up to `most` bytes, as many as a choice says
    const size_t n = std::min<size_t>(byte() % (most + 1), left());
    std::string out(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return out;
  }
  std::string_view rest() noexcept {
    const std::string_view r(reinterpret_cast<const char*>(data_ + pos_), left());
    pos_ = size_;
    return r;
  }
  bool empty() const noexcept { return left() == 0; }

 private:
  size_t left() const noexcept { return size_ - std::min(pos_, size_); }
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// A router with no links, run on its own thread until this goes; `before` (taps) runs before it
// starts.
struct RunningRouter {
  explicit RunningRouter(const std::function<void(Router&)>& before = {}) {
    if (before) before(router);
    router.start();
    thread = std::thread([this] { router.run(); });
    router.wait_until_running();
  }
  ~RunningRouter() {
    router.stop();
    thread.join();
  }
  Router router;
  std::thread thread;
};

}  // namespace mavswitch::fuzz
