#include "services/ftp_exchange.hpp"

#include <algorithm>
#include <cstring>

#include "mavswitch/msg/file_transfer_protocol.hpp"

namespace mavswitch::services {

namespace ftp {

const char* error_name(uint8_t error) noexcept {
  switch (error) {
    case kErrNone: return "none";
    case kFail: return "failed";
    case kFailErrno: return "failed (errno)";
    case kInvalidDataSize: return "invalid data size";
    case kInvalidSession: return "invalid session";
    case kNoSessionsAvailable: return "no sessions available";
    case kEndOfFile: return "end of file";
    case kUnknownCommand: return "unknown command";
    case kFileExists: return "file exists";
    case kFileProtected: return "file protected";
    case kFileNotFound: return "file not found";
    default: return "unknown error";
  }
}

Payload Payload::decode(const std::array<uint8_t, 251>& b) noexcept {
  Payload p;
  p.seq = static_cast<uint16_t>(b[0] | b[1] << 8);
  p.session = b[2], p.opcode = b[3], p.size = b[4], p.req_opcode = b[5];
  p.burst_complete = b[6] != 0;
  p.offset = uint32_t(b[8]) | uint32_t(b[9]) << 8 | uint32_t(b[10]) << 16 | uint32_t(b[11]) << 24;
  std::memcpy(p.data.data(), b.data() + 12, kDataMax);
  if (p.size > kDataMax) p.size = kDataMax;  // a peer's size is data, never a length to trust
  return p;
}

std::array<uint8_t, 251> Payload::encode() const noexcept {
  std::array<uint8_t, 251> b{};
  b[0] = static_cast<uint8_t>(seq), b[1] = static_cast<uint8_t>(seq >> 8);
  b[2] = session, b[3] = opcode, b[4] = size, b[5] = req_opcode, b[6] = burst_complete ? 1 : 0;
  for (int k = 0; k < 4; ++k) b[static_cast<size_t>(8 + k)] = static_cast<uint8_t>(offset >> (8 * k));
  std::memcpy(b.data() + 12, data.data(), kDataMax);
  return b;
}

}  // namespace ftp

namespace {

uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

std::vector<Exchange::Listen> FtpExchange::listens() const { return {{msg::FileTransferProtocol::kId, true}}; }

void FtpExchange::start(Component& from) {
  switch (mode_) {
    case Mode::kList: return request(from, ftp::kListDirectory, 0, path_, path_.size());
    case Mode::kRead: return request(from, ftp::kOpenFileRO, 0, path_, path_.size());
    case Mode::kWrite: return request(from, ftp::kCreateFile, 0, path_, path_.size());
    case Mode::kCrc: return request(from, ftp::kCalcFileCrc32, 0, path_, path_.size());
    case Mode::kRemove: {
      const bool directory = path_.size() > 1 && path_.ends_with('/');
      const std::string_view path = directory ? std::string_view(path_).substr(0, path_.size() - 1) : path_;
      return request(from, directory ? ftp::kRemoveDirectory : ftp::kRemoveFile, 0, path, path.size());
    }
  }
}

void FtpExchange::request(Component& from, uint8_t op, uint32_t offset, std::string_view data, size_t size) {
  sent_ = {};
  // The component takes a request whose number follows its last reply's as that request again
  // (and answers with the reply it kept): numbers go on from exchange to exchange, and past
  // every reply a burst may still bring.
  sent_.seq = next_seq_;
  next_seq_ = static_cast<uint16_t>(next_seq_ + 1u + (op == ftp::kBurstReadFile ? kMaxBurst + 1u : 0u));
  sent_.session = session_;
  sent_.opcode = op;
  sent_.offset = offset;
  sent_.size = static_cast<uint8_t>(std::min(size, ftp::kDataMax));
  std::copy_n(data.data(), std::min(data.size(), ftp::kDataMax), sent_.data.data());  // data() may be null when empty
  send(from);
}

void FtpExchange::send(Component& from) {
  msg::FileTransferProtocol m;
  m.target_system = system_, m.target_component = component_;
  m.payload = sent_.encode();
  from.send(m);
}

void FtpExchange::write_from(std::string bytes) {
  auto stream = std::make_shared<ByteStream>(bytes.size());
  stream->write(bytes);
  stream->finish(true);
  write_from(std::move(stream), bytes.size());
}

bool FtpExchange::paused() const {
  if (mode_ == Mode::kWrite)
    return waiting_ && source_->available() == 0 && source_->state() == ByteStream::State::kOpen;
  return mode_ == Mode::kRead && open_ && !closing_ && into_ && !into_->stream().cancelled() &&
         into_->stream().room() == 0;
}

std::pair<uint64_t, uint64_t> FtpExchange::progress() const {
  switch (mode_) {
    case Mode::kRead: return {into_ ? into_->at() : 0, size_};
    case Mode::kWrite: return {at_, length_};
    case Mode::kList: return {entries_.size(), 0};
    default: return {0, 0};
  }
}

Exchange::Step FtpExchange::heard(const protocol::FrameView& frame, Component& from) {
  const auto p = ftp::Payload::decode(msg::FileTransferProtocol::decode(frame.payload()).payload);
  if (static_cast<uint16_t>(p.seq - next_seq_) < 0x8000u) next_seq_ = static_cast<uint16_t>(p.seq + 1u);
  // A read's bytes are the file's at their offset, whichever request (or burst) they answer.
  const bool reading = mode_ == Mode::kRead && open_ && !closing_ && p.session == session_;
  if (reading && p.opcode == ftp::kAck && (p.req_opcode == ftp::kBurstReadFile || p.req_opcode == ftp::kReadFile))
    return on_data(p, from);
  if (reading && p.opcode == ftp::kNak && p.req_opcode == ftp::kBurstReadFile && sent_.opcode == ftp::kBurstReadFile &&
      p.data[0] == ftp::kEndOfFile) {
    end_ = p.offset;  // a burst's NAK says where it met the end
    return deliver_then_read(from);
  }
  if (p.seq != static_cast<uint16_t>(sent_.seq + 1) || p.req_opcode != sent_.opcode) return Step::kIgnored;
  if (p.opcode == ftp::kAck) return on_ack(p, from);
  if (p.opcode == ftp::kNak) return on_nak(p, from);
  return Step::kIgnored;
}

Exchange::Step FtpExchange::on_ack(const ftp::Payload& p, Component& from) {
  if (closing_) return Step::kDone;
  switch (sent_.opcode) {
    case ftp::kListDirectory: {
      // Entries end with NUL: "F<name>\t<size>", "D<name>", or "S" (skipped, still counted).
      size_t at = 0;
      while (at < p.size) {
        const auto* start = reinterpret_cast<const char*>(p.data.data()) + at;
        const size_t len = strnlen(start, p.size - at);
        const std::string_view entry(start, len);
        at += len + 1;
        if (entry.empty()) continue;
        ++listed_;
        if (entries_.size() >= kMaxEntries) break;
        if (entry[0] == 'F') {
          const size_t tab = entry.find('\t');
          Entry e{std::string(entry.substr(1, tab == std::string_view::npos ? std::string_view::npos : tab - 1)), false,
                  0};
          if (tab != std::string_view::npos)
            for (const char c : entry.substr(tab + 1)) {
              if (c < '0' || c > '9' || e.size > (uint64_t(1) << 50)) break;
              e.size = e.size * 10 + uint64_t(c - '0');
            }
          entries_.push_back(std::move(e));
        } else if (entry[0] == 'D' && entry != "D." && entry != "D..") {
          entries_.push_back({std::string(entry.substr(1)), true, 0});
        }
      }
      if (entries_.size() >= kMaxEntries) return Step::kDone;
      request(from, ftp::kListDirectory, listed_, path_, path_.size());
      return Step::kProgress;
    }
    case ftp::kOpenFileRO:
      session_ = p.session, open_ = true;
      size_ = p.size >= 4 ? le32(p.data.data()) : 0;
      // Never past the size it said it had (a file that grows is read as it was when opened).
      if (size_ > 0) into_->limit(size_);
      if (opened_) opened_(size_);
      read_on(from);
      return Step::kProgress;
    case ftp::kCreateFile:
      session_ = p.session, open_ = true;
      write_on(from);
      return Step::kProgress;
    case ftp::kWriteFile:
      at_ = sent_.offset + uint64_t(sent_.size);
      pending_.erase(0, sent_.size);
      write_on(from);
      return Step::kProgress;
    case ftp::kCalcFileCrc32:
      crc_ = p.size >= 4 ? le32(p.data.data()) : 0;
      complete_ = true;
      return Step::kDone;
    case ftp::kRemoveFile:
    case ftp::kRemoveDirectory: complete_ = true; return Step::kDone;
    default: return Step::kIgnored;
  }
}

Exchange::Step FtpExchange::on_nak(const ftp::Payload& p, Component& from) {
  const uint8_t error = p.size > 0 ? p.data[0] : uint8_t{ftp::kFail};
  if (closing_) return Step::kDone;  // the session is gone either way
  if (sent_.opcode == ftp::kListDirectory && error == ftp::kEndOfFile && listed_ > 0) {
    complete_ = true;
    return Step::kDone;
  }
  if (sent_.opcode == ftp::kListDirectory && error == ftp::kEndOfFile) {  // an empty directory
    complete_ = true;
    return Step::kDone;
  }
  if (mode_ == Mode::kRead && open_ && error == ftp::kEndOfFile) {
    end_ = sent_.offset;
    return deliver_then_read(from);
  }
  return fail(from, error, p.size > 1 ? p.data[1] : 0);
}

Exchange::Step FtpExchange::fail(Component& from, uint8_t error, uint8_t error_errno) {
  error_ = error, errno_ = error_errno;
  if (!open_) return Step::kDone;
  return close(from);
}

Exchange::Step FtpExchange::on_data(const ftp::Payload& p, Component& from) {
  if (into_->stream().cancelled()) return fail(from, ftp::kFail);
  // Bytes it had are no progress, even as an answer: a component that sends the same again and
  // again spends the tries (each silence asks again) instead of keeping the read alive for ever.
  if (!into_->put(p.offset, {reinterpret_cast<const char*>(p.data.data()), p.size})) return Step::kIgnored;
  // The end of the burst asked for, or the gap's read answered: the next request.
  const uint16_t after = static_cast<uint16_t>(p.seq - sent_.seq);
  const bool answered = p.req_opcode == sent_.opcode && ((p.req_opcode == ftp::kReadFile && after == 1) ||
                                                         (p.burst_complete && after >= 1 && after <= kMaxBurst));
  return answered ? deliver_then_read(from) : deliver(from);
}

Exchange::Step FtpExchange::deliver_then_read(Component& from) {
  const Step step = deliver(from);
  if (step == Step::kProgress && !closing_) read_on(from);
  return step;
}

Exchange::Step FtpExchange::deliver(Component& from) {
  const uint64_t at = into_->at();
  const bool whole = (end_ && at >= *end_) || (!end_ && size_ > 0 && at >= size_);
  if (whole) {         // the stream ends when the session has (the caller's done), so that a client's
    complete_ = true;  // next request finds the component free
    return close(from);
  }
  return Step::kProgress;
}

void FtpExchange::read_on(Component& from) {
  ByteStream& stream = into_->stream();
  if (stream.cancelled() || stream.room() == 0) return;  // gone, or paused: the engine's next turn looks again
  const uint64_t at = into_->at();
  if (const auto gap_end = into_->gap_end())
    return request(from, ftp::kReadFile, static_cast<uint32_t>(at), {},
                   std::min<uint64_t>(*gap_end - at, ftp::kDataMax));
  request(from, ftp::kBurstReadFile, static_cast<uint32_t>(at), {}, ftp::kDataMax);
}

void FtpExchange::write_on(Component& from) {
  waiting_ = false;
  if (pending_.size() < ftp::kDataMax && !drained_) {
    uint8_t more[ftp::kDataMax];
    const size_t n = source_->take(more, ftp::kDataMax - pending_.size(), &drained_);
    pending_.append(reinterpret_cast<const char*>(more), n);
  }
  if (!pending_.empty()) {
    const std::string_view chunk = std::string_view(pending_).substr(0, ftp::kDataMax);
    return request(from, ftp::kWriteFile, static_cast<uint32_t>(at_), chunk, chunk.size());
  }
  const ByteStream::State state = source_->state();
  if (drained_ || (state == ByteStream::State::kWhole && source_->available() == 0)) {
    complete_ = at_ == length_;
    if (!complete_) error_ = ftp::kFail;  // fewer bytes than promised
    close(from);
    return;
  }
  if (state != ByteStream::State::kOpen) {  // the client went before the end
    fail(from, ftp::kFail);
    return;
  }
  waiting_ = true;  // its next bytes: paused until they come
}

Exchange::Step FtpExchange::close(Component& from) {
  closing_ = true;
  request(from, ftp::kTerminateSession, 0, {}, 0);
  return Step::kProgress;
}

bool FtpExchange::silent(Component& from) {
  if (mode_ == Mode::kWrite && waiting_) {  // the bytes it waited for came (or the end)
    write_on(from);
    return true;
  }
  if (mode_ == Mode::kRead && open_ && !closing_) {
    if (into_->stream().cancelled()) {
      fail(from, ftp::kFail);
      return true;
    }
    read_on(from);  // a new request: the burst it waited on may be over
    return true;
  }
  send(from);  // the same request: the component answers it with the reply it made
  return true;
}

}  // namespace mavswitch::services
