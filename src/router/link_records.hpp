// What the router knows of each link, one record per link id, in one table. Routing answers link
// ids; every worker reads the record of a destination per delivery, without a lock: records
// live in chunks that never move. Routing keeps only what a decision reads (routing.hpp's
// LinkSlot: policy, traits, group), because routing is a layer below that knows no worker.
//
// Who may touch what, asserted where it is written:
//  - owner and direct: written once in open(), before the link is routable (from
//    Routing::add_link's callback, under its lock, which publishes them); read by any worker.
//  - name: any thread, under a lock (log lines; links come and go rarely); "link N" once closed.
//  - link, sequences, radio, published: the owner's thread alone, between open() and close().
//    A record's next owner takes the id only after Routing::remove_link (under the same lock),
//    so one owner's last write comes before the next one's first.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "router/direct_writer.hpp"
#include "router/radio_report.hpp"
#include "routing/sequence_tracker.hpp"
#include "routing/types.hpp"

namespace mavswitch {
namespace transport {
class Link;
}

struct LinkRecord {
  std::atomic<uint32_t> owner{0};                    // the worker that owns the link
  std::atomic<const DirectTarget*> direct{nullptr};  // load it seq_cst: see LinkRecords::close
  transport::Link* link = nullptr;                   // null: closed
  std::unique_ptr<routing::SequenceTracker> sequences;
  RadioReport radio;                        // reports == 0 until the link carries a RADIO_STATUS
  std::unique_ptr<DirectTarget> published;  // what `direct` points at while it is set
  std::string name;                         // "radio1 127.0.0.1:14560"; under LinkRecords' lock
};

class LinkRecords {
 public:
  LinkRecords() = default;
  ~LinkRecords() {
    // relaxed: destruction; no other thread can hold it any more.
    for (auto& c : chunks_) delete[] c.load(std::memory_order_relaxed);
  }
  LinkRecords(const LinkRecords&) = delete;
  LinkRecords& operator=(const LinkRecords&) = delete;

  // Before the link is routable, on its owner's thread (inside Routing::add_link's callback):
  // add_link publishes the record after this (release), so a worker that sees the link sees it.
  void open(routing::LinkId id, uint32_t owner, transport::Link& link, std::unique_ptr<DirectTarget> direct,
            std::string name) {
    LinkRecord& r = entry_for_write(id);
    r.link = &link;
    r.sequences = std::make_unique<routing::SequenceTracker>();
    r.radio = {};
    r.published = std::move(direct);
    {
      std::lock_guard lock(mutex_);
      r.name = std::move(name);
    }
    // relaxed: published by the release store of `direct` just below.
    r.owner.store(owner, std::memory_order_relaxed);
    r.direct.store(r.published.get(), std::memory_order_release);
  }
  // No new reader finds the link's DirectTarget from now on (sequentially consistent, so ordered
  // before the epoch that retires it: router/epochs.hpp); returned for the caller to retire.
  std::unique_ptr<DirectTarget> withdraw_direct(routing::LinkId id) noexcept {
    LinkRecord& r = at(id);
    r.direct.store(nullptr);
    return std::move(r.published);
  }
  // The owner's part, on its thread, before Routing::remove_link gives the id back. The name
  // goes too: a thousand small strings left behind by clients that came and went would pin the
  // heap's pages their buffers were on (RSS after they leave: bench/window_clients).
  std::unique_ptr<DirectTarget> close(routing::LinkId id) noexcept {
    auto direct = withdraw_direct(id);
    LinkRecord& r = at(id);
    r.link = nullptr;
    r.sequences.reset();
    r.radio = {};
    {
      std::lock_guard lock(mutex_);
      std::string().swap(r.name);
    }
    return direct;
  }
  // A link routing delivered to (so open() ran for it): one load of its chunk, no check, as
  // the per-frame path wants it.
  LinkRecord& at(routing::LinkId id) const noexcept {
    return chunks_[id >> kChunkBits].load(std::memory_order_acquire)[id & (kChunkSize - 1)];
  }
  // Any thread.
  std::string name(routing::LinkId id) const {
    const LinkRecord* r = find(id);
    std::lock_guard lock(mutex_);
    return r != nullptr && !r->name.empty() ? r->name : "link " + std::to_string(id);
  }

 private:
  static constexpr size_t kChunkBits = 8;
  static constexpr size_t kChunkSize = size_t{1} << kChunkBits;
  static constexpr size_t kMaxChunks = 4096;  // as many links as routing takes
  LinkRecord* find(routing::LinkId id) const noexcept {
    if ((id >> kChunkBits) >= kMaxChunks) return nullptr;
    LinkRecord* chunk = chunks_[id >> kChunkBits].load(std::memory_order_acquire);
    return chunk != nullptr ? &chunk[id & (kChunkSize - 1)] : nullptr;
  }
  LinkRecord& entry_for_write(routing::LinkId id) {
    auto& chunk = chunks_.at(id >> kChunkBits);
    if (chunk.load(std::memory_order_acquire) == nullptr) {
      std::lock_guard lock(mutex_);
      // relaxed: under mutex_, which every writer of a chunk holds.
      if (chunk.load(std::memory_order_relaxed) == nullptr)
        chunk.store(new LinkRecord[kChunkSize], std::memory_order_release);
    }
    return chunk.load(std::memory_order_relaxed)[id & (kChunkSize - 1)];
  }
  std::array<std::atomic<LinkRecord*>, kMaxChunks> chunks_{};
  mutable std::mutex mutex_;  // a chunk's making, and names
};

}  // namespace mavswitch
