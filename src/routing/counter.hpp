// A statistics counter that other threads may read while it counts. Counting is a relaxed
// load and store when one thread owns the counter (no locked instruction on the hot path),
// or an atomic add when several threads count into it. Copying takes a snapshot.
#pragma once

#include <atomic>
#include <cstdint>

namespace mavswitch::routing {

class Counter {
 public:
  Counter() = default;
  Counter(const Counter& other) noexcept : value_(other.get()) {}
  Counter& operator=(const Counter& other) noexcept {
    // relaxed: a count; nothing else is published through it.
    value_.store(other.get(), std::memory_order_relaxed);
    return *this;
  }

  // Only the owning thread counts with these.
  Counter& operator++() noexcept { return *this += 1; }
  Counter& operator+=(uint64_t n) noexcept {
    // relaxed: one writer (the owner); readers want a recent value, not an order.
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    return *this;
  }
  // Any thread.
  void add_shared(uint64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }

  // relaxed: a count for statistics; nothing else is published through it.
  uint64_t get() const noexcept { return value_.load(std::memory_order_relaxed); }
  operator uint64_t() const noexcept { return get(); }  // NOLINT: a counter reads as its value

 private:
  std::atomic<uint64_t> value_{0};
};

}  // namespace mavswitch::routing
