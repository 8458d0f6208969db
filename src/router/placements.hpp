// Where each link lives, for the workers that deliver to it: the worker that owns it, and, for a
// UDP link others may write to themselves, its DirectTarget. Routing answers link ids; this is the
// router's own table beside it, indexed by the same ids and read per delivery without a lock:
// entries live in chunks that never move, written once before a link can be routed to (from
// Routing::add_link's callback, under its lock) and read by any worker.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "router/direct_writer.hpp"
#include "routing/types.hpp"

namespace mavswitch {

class Placements {
 public:
  Placements() = default;
  ~Placements() {
    // relaxed: destruction; no other thread can hold it any more.
    for (auto& c : chunks_) delete[] c.load(std::memory_order_relaxed);
  }
  Placements(const Placements&) = delete;
  Placements& operator=(const Placements&) = delete;

  // Before the link is routable: Routing::add_link publishes it after this (release), so a
  // worker that sees the link sees its place.
  void set(routing::LinkId link, uint32_t owner, const DirectTarget* direct) {
    Entry& e = entry_for_write(link);
    // relaxed: published by the release store of `direct` just below.
    e.owner.store(owner, std::memory_order_relaxed);
    e.direct.store(direct, std::memory_order_release);
  }
  // When the link goes: no new reader finds its DirectTarget. Sequentially consistent, so it is
  // ordered before the epoch that retires the target (router/epochs.hpp).
  void clear_direct(routing::LinkId link) noexcept {
    if (Entry* e = find(link)) e->direct.store(nullptr);
  }
  struct Entry {
    std::atomic<uint32_t> owner{0};
    std::atomic<const DirectTarget*> direct{nullptr};  // load it seq_cst: see clear_direct
  };
  // A link routing delivered to (so set() ran for it): one load of its chunk, no check, as
  // the per-frame path wants it.
  const Entry& at(routing::LinkId link) const noexcept {
    return chunks_[link >> kChunkBits].load(std::memory_order_acquire)[link & (kChunkSize - 1)];
  }

 private:
  static constexpr size_t kChunkBits = 8;
  static constexpr size_t kChunkSize = size_t{1} << kChunkBits;
  static constexpr size_t kMaxChunks = 4096;  // as many links as routing takes
  Entry* find(routing::LinkId link) const noexcept {
    if ((link >> kChunkBits) >= kMaxChunks) return nullptr;
    Entry* chunk = chunks_[link >> kChunkBits].load(std::memory_order_acquire);
    return chunk != nullptr ? &chunk[link & (kChunkSize - 1)] : nullptr;
  }
  Entry& entry_for_write(routing::LinkId link) {
    auto& chunk = chunks_.at(link >> kChunkBits);
    if (chunk.load(std::memory_order_acquire) == nullptr) {
      std::lock_guard lock(grow_);
      // relaxed: under grow_, which every writer of a chunk holds.
      if (chunk.load(std::memory_order_relaxed) == nullptr)
        chunk.store(new Entry[kChunkSize], std::memory_order_release);
    }
    return chunk.load(std::memory_order_relaxed)[link & (kChunkSize - 1)];
  }
  std::array<std::atomic<Entry*>, kMaxChunks> chunks_{};
  std::mutex grow_;
};

}  // namespace mavswitch
