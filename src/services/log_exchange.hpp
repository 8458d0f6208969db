// MAVLink's log protocol as an Exchange: a component's onboard logs listed (LOG_REQUEST_LIST,
// a LOG_ENTRY each, ids from start to end), or part of one read into a ByteStream
// (LOG_REQUEST_DATA for a window of it, LOG_DATA back as fast as the link goes; what a lost
// packet took is asked for again from where the bytes in order end; a short packet ends the
// log only when said kShortEnds times at one place: a log being written grows), or all erased
// (LOG_ERASE, which the protocol does not answer: a list after it says what is left). A read
// ends with LOG_REQUEST_END, which lets the component stream again. Run it as kind "log".
//
// Chose not to build: reading a log by MAVFTP (ArduPilot's /APM/LOGS) in its place.
#pragma once

#include <map>
#include <memory>
#include <optional>

#include "library/transactions.hpp"
#include "services/ordered_bytes.hpp"

namespace mavswitch::services {

class LogExchange final : public Exchange {
 public:
  static constexpr routing::Millis kRetryMs = 500;
  static constexpr int kTries = 10;
  static constexpr uint32_t kWindow = 90 * 512;  // bytes asked for at once: 512 LOG_DATA
  static constexpr size_t kMaxAhead = 1024 * 1024;
  static constexpr size_t kDataMax = 90;  // LOG_DATA's bytes
  static constexpr int kShortEnds = 3;    // the same short end this often: the log ends there

  struct Entry {
    uint16_t id = 0;
    uint32_t time_utc = 0;  // s since 1970; 0: not known
    uint32_t size = 0;      // bytes
  };

  // The entries with ids first..last (all: 0 and 0xFFFF), after erasing every log when `erase`.
  static std::unique_ptr<LogExchange> list(uint8_t system, uint8_t component, uint16_t first = 0,
                                           uint16_t last = 0xFFFF, bool erase = false);
  // Log `id`'s bytes from `from` up to `end` into `into`.
  static std::unique_ptr<LogExchange> read(uint8_t system, uint8_t component, uint16_t id, uint64_t from, uint64_t end,
                                           std::shared_ptr<ByteStream> into);

  const std::map<uint16_t, Entry>& entries() const noexcept { return entries_; }
  // A read: all of it came (whatever became of the LOG_REQUEST_END after it).
  bool complete() const noexcept { return complete_; }

  std::vector<Listen> listens() const override;
  void start(Component& from) override;
  Step heard(const protocol::FrameView& frame, Component& from) override;
  bool silent(Component& from) override;
  routing::Millis retry_ms() const override { return kRetryMs; }
  int tries() const override { return kTries; }
  bool paused() const override;
  std::pair<uint64_t, uint64_t> progress() const override;

 private:
  LogExchange(uint8_t system, uint8_t component) : system_(system), component_(component) {}
  void ask_list(Component& from);
  void ask_data(Component& from);  // from where the bytes in order end, a window at most
  Step end_read(Component& from);

  uint8_t system_, component_;
  bool reading_ = false;
  // A list
  uint16_t first_ = 0, last_ = 0xFFFF;
  bool erase_ = false;
  std::optional<uint16_t> count_;  // the component's num_logs
  std::map<uint16_t, Entry> entries_;
  // A read
  uint16_t id_ = 0;
  uint64_t start_ = 0, end_ = 0, asked_end_ = 0;
  uint64_t short_end_ = 0;  // where the last short packet ended, and how often in a row
  int short_ends_ = 0;
  std::unique_ptr<OrderedBytes> into_;
  bool complete_ = false;
};

}  // namespace mavswitch::services
