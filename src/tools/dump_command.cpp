// `mavswitch dump`: decodes a raw MAVLink stream or a .tlog, one line per frame, text or JSON;
// a summary of counts goes to stderr.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "dialect/builtin.hpp"
#include "dialect/loader.hpp"
#include "dialect/runtime_decode.hpp"
#include "protocol/parser.hpp"
#include "protocol/tlog.hpp"
#include "tools/commands.hpp"
#include "tools/field_format.hpp"

namespace mavswitch::tools {
namespace {

// The decoding side: the generated typed code, or a dialect loaded from XML now.
class Decoder {
 public:
  explicit Decoder(const std::string& xml) {
    if (xml.empty()) {
      table_ = &dialect::builtin::message_table();
      return;
    }
    runtime_ = std::make_unique<dialect::Dialect>(dialect::load_dialect(xml));
    runtime_table_ = runtime_->message_table();
    table_ = &runtime_table_;
  }
  const protocol::MessageTable& table() const { return *table_; }
  bool decode(uint32_t msgid, std::span<const uint8_t> payload, dialect::FieldSink& sink) const {
    if (!runtime_) return dialect::builtin::decode_fields(msgid, payload, sink);
    const dialect::MessageDef* m = runtime_->find(msgid);
    if (m == nullptr) return false;
    dialect::decode_fields(*m, payload, sink);
    return true;
  }

 private:
  std::unique_ptr<dialect::Dialect> runtime_;
  protocol::MessageTable runtime_table_;
  const protocol::MessageTable* table_ = nullptr;
};

class Printer {
 public:
  Printer(const Decoder& decoder, bool json) : decoder_(decoder), json_(json) {}
  ~Printer() { flush(); }

  // A tlog's time (microseconds since 1970, UTC) as a reader wants it: ISO-8601, to the
  // microsecond; --json keeps the raw number for programs.
  void iso_time(uint64_t usec) {
    const time_t seconds = static_cast<time_t>(usec / 1'000'000);
    tm utc{};
    gmtime_r(&seconds, &utc);
    fmt::format_to(std::back_inserter(out_), "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z ", utc.tm_year + 1900,
                   utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, usec % 1'000'000);
  }

  void frame(std::optional<uint64_t> time_usec, const protocol::FrameView& f) {
    const protocol::MessageInfo* info = decoder_.table().find(f.msgid());
    const std::string_view name = info ? info->name : std::string_view("UNKNOWN");
    ++counts_[std::string(name)];
    auto it = std::back_inserter(out_);
    if (json_) {
      out_.append(std::string_view("{\"time_usec\":"));
      if (time_usec)
        fmt::format_to(it, "{}", *time_usec);
      else
        out_.append(std::string_view("null"));
      fmt::format_to(it, ",\"version\":{},\"seq\":{},\"sysid\":{},\"compid\":{},\"msgid\":{},\"name\":", f.version(),
                     f.seq(), f.sysid(), f.compid(), f.msgid());
      append_quoted(out_, name);
      fmt::format_to(it, ",\"signed\":{},\"fields\":{{", f.is_signed());
      FieldFormatter fields(out_, FieldFormatter::Style::kJson);
      if (info) decoder_.decode(f.msgid(), f.payload(), fields);
      out_.append(std::string_view("}"));
      if (!info) hex_payload(",\"payload_hex\":\"", f);
      out_.append(std::string_view("}\n"));
    } else {
      if (time_usec) iso_time(*time_usec);
      fmt::format_to(it, "v{} seq={} sys={} comp={} id={} {}{}", f.version(), f.seq(), f.sysid(), f.compid(), f.msgid(),
                     name, f.is_signed() ? " signed" : "");
      if (info) {
        out_.push_back(' ');
        FieldFormatter fields(out_, FieldFormatter::Style::kText);
        decoder_.decode(f.msgid(), f.payload(), fields);
      } else {
        hex_payload(" payload=", f);
      }
      out_.push_back('\n');
    }
    if (out_.size() > (1 << 16)) flush();
  }

  void flush() {
    std::fwrite(out_.data(), 1, out_.size(), stdout);
    out_.clear();
  }
  const std::map<std::string, uint64_t>& counts() const { return counts_; }

 private:
  void hex_payload(std::string_view prefix, const protocol::FrameView& f) {
    out_.append(prefix);
    for (uint8_t b : f.payload()) fmt::format_to(std::back_inserter(out_), "{:02x}", b);
    if (json_) out_.push_back('"');
  }

  const Decoder& decoder_;
  bool json_;
  fmt::memory_buffer out_;
  std::map<std::string, uint64_t> counts_;
};

class Input {
 public:
  explicit Input(const std::string& path) {
    if (path == "-") {
      fd_ = STDIN_FILENO;
    } else {
      fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd_ < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
      owned_ = true;
    }
    path_ = path;
  }
  ~Input() {
    if (owned_) ::close(fd_);
  }
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  // Reads up to buf.size() bytes; 0 at end of input.
  size_t read(std::span<uint8_t> buf) {
    for (;;) {
      const ssize_t n = ::read(fd_, buf.data(), buf.size());
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) throw std::runtime_error(path_ + ": " + std::strerror(errno));
    }
  }

 private:
  int fd_ = -1;
  bool owned_ = false;
  std::string path_;
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

void print_summary(const Printer& printer, const protocol::ParserStats& s, uint64_t bytes) {
  fmt::print(stderr, "summary: {} frames in {} bytes\n", s.frames, bytes);
  for (const auto& [name, count] : printer.counts()) fmt::print(stderr, "  {} {}\n", name, count);
  fmt::print(stderr,
             "errors: bytes_skipped={} crc_failures={} unknown_ids={} bad_incompat_flags={} truncated_frames={} "
             "truncated_bytes={}\n",
             s.bytes_skipped, s.crc_failures, s.unknown_ids, s.bad_incompat_flags, s.truncated_frames,
             s.truncated_bytes);
}

}  // namespace

int run_dump(const DumpOptions& options) {
  try {
    const Decoder decoder(options.dialect_xml);
    Input input(options.input);
    Printer printer(decoder, options.json);
    protocol::ParserStats stats;
    uint64_t bytes = 0;
    std::vector<uint8_t> buf(1 << 16);

    if (options.tlog || ends_with(options.input, ".tlog")) {
      // A tlog is read whole: records are parsed in sequence, never scanned like a raw stream.
      std::vector<uint8_t> log;
      for (size_t n; (n = input.read(buf)) > 0;) log.insert(log.end(), buf.begin(), buf.begin() + static_cast<long>(n));
      bytes = log.size();
      stats = protocol::read_tlog(decoder.table(), log,
                                  [&](uint64_t t, const protocol::FrameView& f) { printer.frame(t, f); });
    } else {
      protocol::FrameParser parser(decoder.table());
      auto sink = [&](const protocol::FrameView& f) { printer.frame(std::nullopt, f); };
      for (size_t n; (n = input.read(buf)) > 0;) {
        bytes += n;
        parser.feed({buf.data(), n}, sink);
      }
      parser.finish(sink);
      stats = parser.stats();
    }
    printer.flush();
    std::fflush(stdout);
    print_summary(printer, stats, bytes);
    if (stats.frames == 0 && bytes > 0) {
      fmt::print(stderr, "mavswitch dump: {}: no MAVLink frames found\n", options.input);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "mavswitch dump: {}\n", e.what());
    return 1;
  }
}

}  // namespace mavswitch::tools
