// ArduPilot's dataflash log over MAVLink: REMOTE_LOG_DATA_BLOCK, 200 bytes each, numbered from
// 0 when the stream starts; block n belongs at byte n x 200 of the file. Blocks may be lost,
// come twice or out of order. This keeps which ones are still missing, so that each is NACKed
// by its own number until it comes (or is given up). Pure: no I/O, time passed in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace mavswitch::logs {

class DataflashStream {
 public:
  static constexpr size_t kBlockLen = 200;
  // A first block past this was sent before we asked: the stream began mid-log.
  static constexpr uint32_t kMidStream = 100;
  enum class Take { kNew, kAgain, kMidStream };

  Take block(uint32_t seqno, uint64_t now_ms);
  // Blocks missing for at least `after_ms` and not NACKed in the last `every_ms`: NACK these
  // now (they are marked as NACKed at now_ms).
  std::vector<uint32_t> due_nacks(uint64_t now_ms, uint64_t after_ms, uint64_t every_ms, size_t at_most);
  // Blocks missing for longer than `older_than_ms` are given up; returns how many.
  uint64_t give_up(uint64_t now_ms, uint64_t older_than_ms);
  size_t missing() const noexcept { return missing_.size(); }

 private:
  struct Missing {
    uint64_t since_ms;
    uint64_t nacked_ms = 0;
  };
  bool started_ = false;
  uint32_t next_ = 0;  // one past the highest block seen
  std::map<uint32_t, Missing> missing_;
  static constexpr size_t kMaxMissing = 4096;  // a peer cannot make this grow without bound
};

}  // namespace mavswitch::logs
