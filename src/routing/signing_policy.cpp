#include "routing/signing_policy.hpp"

#include <algorithm>

namespace mavswitch::routing {

protocol::SigningKey SignatureGate::key() const {
  std::lock_guard lock(mutex_);
  return key_;
}

void SignatureGate::set_key(const protocol::SigningKey& key) {
  std::lock_guard lock(mutex_);
  key_ = key;
}

SignatureGate::Result SignatureGate::check(const protocol::FrameView& f, uint64_t now) {
  const bool allowed_unsigned = policy_->unsigned_allowed.contains(f.msgid());
  // The signature itself is checked outside the lock: it is the expensive part (SHA-256).
  const bool valid = f.is_v2() && f.is_signed() && protocol::signature_valid(key(), f);
  std::lock_guard lock(mutex_);
  if (!f.is_v2() && !allowed_unsigned) {
    ++counters_.rejected_mavlink1;
    return Result::kMavlink1;
  }
  if (!f.is_signed()) {
    if (allowed_unsigned) {
      ++counters_.accepted_unsigned;
      return Result::kAccept;
    }
    ++counters_.rejected_unsigned;
    return Result::kUnsigned;
  }
  if (!valid) {
    ++counters_.rejected_bad_signature;
    return Result::kBadSignature;
  }
  const uint64_t ts = protocol::signature_timestamp(f);
  const uint32_t stream = key_of(protocol::signature_link_id(f), f.sysid(), f.compid());
  auto it = last_.find(stream);
  const bool replay = it != last_.end() ? ts <= it->second : ts + kNewStreamWindow < now;
  if (replay) {
    ++counters_.rejected_replay;
    return Result::kReplay;
  }
  if (it != last_.end()) {
    it->second = ts;
  } else {
    if (last_.size() >= kMaxStreams) {
      last_.erase(std::min_element(last_.begin(), last_.end(),
                                   [](const auto& a, const auto& b) { return a.second < b.second; }));
    }
    last_.emplace(stream, ts);
  }
  ++counters_.accepted;
  return Result::kAccept;
}

void SignatureGate::count_out(bool signed_out) {
  std::lock_guard lock(mutex_);
  ++(signed_out ? counters_.signed_out : counters_.unsignable_out);
}

SigningCounters SignatureGate::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

std::vector<SignatureGate::Stream> SignatureGate::streams() const {
  std::lock_guard lock(mutex_);
  std::vector<Stream> out;
  for (const auto& [k, ts] : last_) {
    out.push_back({static_cast<uint8_t>(k >> 16), static_cast<uint8_t>(k >> 8), static_cast<uint8_t>(k), ts});
  }
  return out;
}

void SignatureGate::restore(const Stream& s) {
  std::lock_guard lock(mutex_);
  uint64_t& ts = last_[key_of(s.link_id, s.sysid, s.compid)];
  ts = std::max(ts, s.timestamp);
}

}  // namespace mavswitch::routing
