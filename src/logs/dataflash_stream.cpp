#include "logs/dataflash_stream.hpp"

namespace mavswitch::logs {

DataflashStream::Take DataflashStream::block(uint32_t seqno, uint64_t now_ms) {
  if (!started_) {
    if (seqno >= kMidStream) return Take::kMidStream;
    started_ = true;
  }
  if (seqno < next_) return missing_.erase(seqno) ? Take::kNew : Take::kAgain;
  if (seqno - next_ > kMaxMissing) return Take::kMidStream;  // nothing sane: start again
  for (uint32_t n = next_; n < seqno; ++n) missing_.emplace(n, Missing{now_ms});
  while (missing_.size() > kMaxMissing) missing_.erase(missing_.begin());
  next_ = seqno + 1;
  return Take::kNew;
}

std::vector<uint32_t> DataflashStream::due_nacks(uint64_t now_ms, uint64_t after_ms, uint64_t every_ms,
                                                 size_t at_most) {
  std::vector<uint32_t> out;
  for (auto& [seqno, m] : missing_) {
    if (out.size() >= at_most) break;
    if (now_ms - m.since_ms < after_ms || (m.nacked_ms != 0 && now_ms - m.nacked_ms < every_ms)) continue;
    m.nacked_ms = now_ms;
    out.push_back(seqno);
  }
  return out;
}

uint64_t DataflashStream::give_up(uint64_t now_ms, uint64_t older_than_ms) {
  return std::erase_if(missing_, [&](const auto& e) { return now_ms - e.second.since_ms > older_than_ms; });
}

}  // namespace mavswitch::logs
