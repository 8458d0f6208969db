// MAVLink's file transfer protocol (MAVFTP, FILE_TRANSFER_PROTOCOL) as an Exchange: a directory
// listed, a file read into a ByteStream (burst reads, the bytes a lost packet took read again
// one packet at a time), a file written, removed, or its CRC32 asked for. Each request carries
// a sequence number; a silence sends the same request again, which the component answers with
// the reply it already made (ArduPilot keeps its last), so a lost reply costs a retry, not a
// second effect. Run it as kind "ftp": one file operation per component at a time.
//
// Chose not to build: several sessions at once, reads of several files at once, and
// TruncateFile, Rename and CreateDirectory (no HTTP verb asks for them).
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/byte_stream.hpp"
#include "library/transactions.hpp"
#include "services/ordered_bytes.hpp"

namespace mavswitch::services {

// The protocol's opcodes and NAK errors, as the spec numbers them.
namespace ftp {
enum Op : uint8_t {
  kNone = 0,
  kTerminateSession = 1,
  kResetSessions = 2,
  kListDirectory = 3,
  kOpenFileRO = 4,
  kReadFile = 5,
  kCreateFile = 6,
  kWriteFile = 7,
  kRemoveFile = 8,
  kCreateDirectory = 9,
  kRemoveDirectory = 10,
  kOpenFileWO = 11,
  kTruncateFile = 12,
  kRename = 13,
  kCalcFileCrc32 = 14,
  kBurstReadFile = 15,
  kAck = 128,
  kNak = 129,
};
enum Error : uint8_t {
  kErrNone = 0,
  kFail = 1,
  kFailErrno = 2,
  kInvalidDataSize = 3,
  kInvalidSession = 4,
  kNoSessionsAvailable = 5,
  kEndOfFile = 6,
  kUnknownCommand = 7,
  kFileExists = 8,
  kFileProtected = 9,
  kFileNotFound = 10,
};
constexpr size_t kDataMax = 239;  // a payload's data after its 12-byte header
const char* error_name(uint8_t error) noexcept;

// One payload of FILE_TRANSFER_PROTOCOL: its 12-byte header and data.
struct Payload {
  uint16_t seq = 0;
  uint8_t session = 0, opcode = 0, size = 0, req_opcode = 0;
  bool burst_complete = false;
  uint32_t offset = 0;
  std::array<uint8_t, kDataMax> data{};
  static Payload decode(const std::array<uint8_t, 251>& bytes) noexcept;
  std::array<uint8_t, 251> encode() const noexcept;
};
}  // namespace ftp

class FtpExchange final : public Exchange {
 public:
  enum class Mode { kList, kRead, kWrite, kRemove, kCrc };
  static constexpr routing::Millis kRetryMs = 300;
  static constexpr int kTries = 10;
  // A read holds at most this beyond a gap, while the gap is read again; more is dropped and read
  // later.
  static constexpr size_t kMaxAhead = 512 * 1024;
  static constexpr uint16_t kMaxBurst = 4096;  // replies one burst request may bring (ArduPilot: 2,000)

  struct Entry {
    std::string name;
    bool directory = false;
    uint64_t size = 0;
  };

  // kList: `path`'s entries. kRead: `path` into `into` (its size first, through `opened`; the
  // caller finishes `into` when the engine says done, complete() or not).
  // kWrite: `bytes` (or what `from` brings, `length` bytes) to `path`. kRemove: the file (or, with a trailing '/', the
  // empty directory). kCrc: the file's CRC32. `seq`: the sequence number to go on from, the last exchange's next_seq()
  // with the component.
  FtpExchange(Mode mode, uint8_t system, uint8_t component, std::string path, uint16_t seq)
      : mode_(mode), system_(system), component_(component), path_(std::move(path)), next_seq_(seq) {}
  // A write's source is let go: a client still sending (the vehicle refused the file) is read
  // on and its bytes dropped, so that it hears the answer.
  ~FtpExchange() override {
    if (source_) source_->cancel();
  }
  FtpExchange(const FtpExchange&) = delete;
  FtpExchange& operator=(const FtpExchange&) = delete;
  uint16_t next_seq() const noexcept { return next_seq_; }
  void read_into(std::shared_ptr<ByteStream> into, std::function<void(uint64_t size)> opened) {
    into_ = std::make_unique<OrderedBytes>(std::move(into), 0, kMaxAhead), opened_ = std::move(opened);
  }
  void write_from(std::string bytes);
  // The bytes as their maker writes them (a client's request body); a maker that fails ends the
  // write with kFail. Only what has come is held (a chunk), never the whole file.
  void write_from(std::shared_ptr<ByteStream> from, uint64_t length) { source_ = std::move(from), length_ = length; }

  // How it ended, when the engine says done: the NAK's error (none: it worked).
  std::optional<uint8_t> error() const noexcept { return error_; }
  uint8_t error_errno() const noexcept { return errno_; }
  // All of it done (a read whole, a write written), whether or not the session's close was heard.
  bool complete() const noexcept { return complete_; }
  const std::vector<Entry>& entries() const noexcept { return entries_; }
  uint32_t crc32() const noexcept { return crc_; }
  uint64_t size() const noexcept { return size_; }
  Mode mode() const noexcept { return mode_; }

  std::vector<Listen> listens() const override;
  void start(Component& from) override;
  Step heard(const protocol::FrameView& frame, Component& from) override;
  bool silent(Component& from) override;
  routing::Millis retry_ms() const override { return kRetryMs; }
  int tries() const override { return kTries; }
  bool paused() const override;
  std::pair<uint64_t, uint64_t> progress() const override;

 private:
  Step on_ack(const ftp::Payload& p, Component& from);
  Step on_nak(const ftp::Payload& p, Component& from);
  Step on_data(const ftp::Payload& p, Component& from);
  // A new request (its own sequence number); `size` is the data's, or the bytes a read wants.
  void request(Component& from, uint8_t op, uint32_t offset, std::string_view data, size_t size);
  void send(Component& from);
  void read_on(Component& from);  // the next read: a gap again, or a burst from where it stands
  void write_on(Component& from);
  Step close(Component& from);  // TerminateSession, then done
  Step fail(Component& from, uint8_t error, uint8_t error_errno = 0);
  Step deliver(Component& from);  // the bytes in order so far to `into_`; the end when it came
  Step deliver_then_read(Component& from);

  Mode mode_;
  uint8_t system_, component_;
  std::string path_;
  ftp::Payload sent_;  // the request in flight (sent again as it is after a silence)
  uint16_t next_seq_;
  uint8_t session_ = 0;
  bool open_ = false, closing_ = false, complete_ = false;
  std::optional<uint8_t> error_;
  uint8_t errno_ = 0;
  // kList
  static constexpr size_t kMaxEntries = 10'000;
  std::vector<Entry> entries_;
  uint32_t listed_ = 0;  // entries the component has given (its offset counts skipped ones too)
  // kRead
  std::unique_ptr<OrderedBytes> into_;
  std::function<void(uint64_t)> opened_;
  uint64_t size_ = 0;
  std::optional<uint64_t> end_;  // where the component said the file ends
  // kWrite
  std::shared_ptr<ByteStream> source_;
  uint64_t length_ = 0;
  std::string pending_;   // taken from the source, from at_ on, not yet acknowledged
  bool drained_ = false;  // the source is whole and all of it taken
  bool waiting_ = false;  // no request out: the source had nothing yet (paused)
  uint64_t at_ = 0;       // written
  // kCrc
  uint32_t crc_ = 0;
};

}  // namespace mavswitch::services
