// MAVLink 2 signing on a link: what the link requires of incoming frames, whether frames
// leaving on it are signed, and the replay protection (a newer timestamp per stream, a stream
// being (signature link id, system, component)). The replay table belongs to the endpoint, so
// every link of it (every TCP client, every UDP peer) shares it, and it can be persisted. The
// links of one endpoint may live on different I/O workers: the gate takes a lock (uncontended
// unless two workers check frames of the same endpoint at the same instant).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "protocol/frame.hpp"
#include "protocol/signing.hpp"
#include "routing/filter.hpp"

namespace mavswitch::routing {

struct SigningPolicy {
  protocol::SigningKey key{};
  bool verify = true;             // incoming frames must carry a valid, fresh signature
  bool sign = true;               // outgoing frames are signed with key
  uint8_t link_id = 0;            // the link id our signatures carry
  MessageIdSet unsigned_allowed;  // accepted without a signature (and as MAVLink 1), e.g. RADIO_STATUS
};

struct SigningCounters {
  uint64_t accepted = 0;           // signed, valid, fresh
  uint64_t accepted_unsigned = 0;  // unsigned but on the allow-list
  uint64_t rejected_unsigned = 0;
  uint64_t rejected_bad_signature = 0;
  uint64_t rejected_replay = 0;
  uint64_t rejected_mavlink1 = 0;
  uint64_t signed_out = 0;
  uint64_t unsignable_out = 0;  // MAVLink 1 frames sent as they are
};

class SignatureGate {
 public:
  enum class Result { kAccept, kUnsigned, kBadSignature, kReplay, kMavlink1 };
  struct Stream {
    uint8_t link_id, sysid, compid;
    uint64_t timestamp;
  };
  // A new stream may start at most this far behind our clock (the spec's one minute).
  static constexpr uint64_t kNewStreamWindow = 60ull * 100'000;
  static constexpr size_t kMaxStreams = 4096;  // beyond: the stalest stream is forgotten

  explicit SignatureGate(std::shared_ptr<const SigningPolicy> policy)
      : policy_(std::move(policy)), key_(policy_->key) {}

  // `now` is our signing clock (protocol::signing_timestamp_now()).
  Result check(const protocol::FrameView& frame, uint64_t now);

  // Its rules, as configured. The key is key(): a reload may change it while links run.
  const SigningPolicy& policy() const noexcept { return *policy_; }
  protocol::SigningKey key() const;
  // A new key for every link of the endpoint from now on (a reload read a changed key file);
  // the replay table and the counters stay.
  void set_key(const protocol::SigningKey& key);
  // Counts a frame leaving signed, or sent as it is (MAVLink 1 cannot be signed).
  void count_out(bool signed_out);
  SigningCounters counters() const;
  std::vector<Stream> streams() const;
  void restore(const Stream& s);

 private:
  static uint32_t key_of(uint8_t link, uint8_t sys, uint8_t comp) {
    return uint32_t{link} << 16 | uint32_t{sys} << 8 | comp;
  }
  std::shared_ptr<const SigningPolicy> policy_;
  mutable std::mutex mutex_;
  protocol::SigningKey key_;                     // under mutex_
  std::unordered_map<uint32_t, uint64_t> last_;  // stream -> newest timestamp accepted
  SigningCounters counters_;
};

}  // namespace mavswitch::routing
