// When may an object that other workers reach through a pointer they read without a lock (a
// link's DirectTarget) be freed? Epoch-based reclamation: each worker announces the epoch it
// has seen wherever it holds no such pointer (the end of each loop iteration, and waking) and
// says "idle" while it sleeps; an object retired at epoch e is freed once every worker has
// announced e or later, or sleeps. Retiring costs one atomic increment, a worker's iteration one
// store and a fence; nobody waits for anybody.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace mavswitch {

class Epochs {
 public:
  explicit Epochs(size_t threads) : seen_(threads) {}

  // Thread t holds no pointer it read before this, and may read new ones after it.
  // The pointers it reads afterwards must be read by seq_cst loads: then a retirer that bumps
  // the epoch after unpublishing (a seq_cst store) either finds this thread's older epoch or
  // was seen by those loads. (On x86 such a load is a plain one.)
  void announce(size_t t) noexcept { seen_[t].value.store(now_.load()); }
  // Thread t sleeps: it holds no pointer until its next announce().
  void idle(size_t t) noexcept { seen_[t].value.store(kIdle, std::memory_order_release); }

  // After the object's pointer was unpublished (by a seq_cst store): the epoch it waits for.
  uint64_t retire() noexcept { return now_.fetch_add(1) + 1; }
  // Whether no thread can still hold a pointer retired at `epoch`.
  bool safe(uint64_t epoch) const noexcept {
    for (const Seen& s : seen_) {
      if (s.value.load() < epoch) return false;
    }
    return true;
  }

 private:
  static constexpr uint64_t kIdle = std::numeric_limits<uint64_t>::max();
  struct alignas(64) Seen {
    std::atomic<uint64_t> value{0};  // 0: not yet announced; nothing retired is freed until it does
  };
  std::atomic<uint64_t> now_{1};
  std::vector<Seen> seen_;
};

}  // namespace mavswitch
