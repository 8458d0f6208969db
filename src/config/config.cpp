// Reading mavlink-router style INI files: sections, lines, and where each value came from.
// What each key means is in config_keys.cpp.
#include "config/config.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "base/file_read.hpp"
#include "config/config_keys.hpp"
#include "transport/socket_address.hpp"

namespace mavswitch::config {
namespace {

using namespace keys;
namespace fs = std::filesystem;
using Kind = transport::EndpointSpec::Kind;

EndpointConfig& endpoint_for(Config& c, Kind kind, const std::string& type, const std::string& name, const Where& w) {
  for (auto& e : c.endpoints) {
    if (e.section_type == type && lower(e.spec.name) == lower(name)) return e;
  }
  EndpointConfig e;
  e.spec.kind = kind;
  e.spec.name = name;
  e.section_type = type;
  e.source = w.text();
  c.endpoints.push_back(std::move(e));
  return c.endpoints.back();
}

// What every endpoint must hold once all files are read; `e` names where it was defined.
void check_endpoint(EndpointConfig& e, uint16_t& next_udp_port) {
  const auto& s = e.spec;
  const std::string where = e.spec.name + " (" + e.source + ")";
  if (s.kind == Kind::kSerial && s.device.empty()) throw ConfigError(where + ": Device is required");
  if (const SectionType* t = section_type(e.section_type); t != nullptr && t->check != nullptr) t->check(where, e);
  const bool addressed = s.kind == Kind::kUdpServer || s.kind == Kind::kUdpClient || s.kind == Kind::kTcpClient;
  if (addressed && s.address.empty()) throw ConfigError(where + ": Address is required");
  if (s.kind == Kind::kUdpServer && !e.port_set) throw ConfigError(where + ": Port is required in server mode");
  const bool needs_port = s.kind == Kind::kUdpServer || s.kind == Kind::kUdpClient || s.kind == Kind::kTcpClient;
  if (needs_port && e.port_set && s.port == 0) {
    throw ConfigError((e.port_at.empty() ? e.source : e.port_at) + ": Port: 0 is not a port (1 to 65535)");
  }
  // A server binds its address: a name or a malformed number is a mistake in the file, said
  // where it was written.
  if (transport::listens(s) && !s.address.empty() && !transport::SocketAddress::numeric(s.address, s.port)) {
    throw ConfigError((e.address_at.empty() ? e.source : e.address_at) + ": Address: '" + s.address +
                      "' is not a numeric address; a server listens on one of this machine's (0.0.0.0 or :: "
                      "for all of them)");
  }
  if ((s.kind == Kind::kTcpClient || s.kind == Kind::kTcpServer) && !e.port_set)
    throw ConfigError(where + ": Port is required");
  if (!s.allow_from.empty() && s.kind != Kind::kUdpServer && s.kind != Kind::kTcpServer) {
    throw ConfigError(where + ": AllowFrom applies to listening endpoints (UDP server mode, TcpServerEndpoint)");
  }
  if (e.signing && !e.signing_key_set) throw ConfigError(where + ": signing keys need SigningKeyFile");
  if (s.kind == Kind::kUdpClient && !e.port_set) e.spec.port = next_udp_port++;
}

}  // namespace

EndpointConfig default_tcp_server() {
  EndpointConfig e;
  e.spec.kind = Kind::kTcpServer;
  e.spec.name = "default";
  e.spec.port = 5760;
  e.port_set = true;
  e.source = "TCP server (TcpServerPort, -t)";
  return e;
}

bool parse_bool(std::string_view text, bool* out) {
  const std::string v = lower(trim(text));
  if (v == "true" || v == "1" || v == "yes" || v == "on")
    *out = true;
  else if (v == "false" || v == "0" || v == "no" || v == "off")
    *out = false;
  else
    return false;
  return true;
}

bool parse_uint(std::string_view text, uint64_t max, uint64_t* out) {
  text = trim(text);
  uint64_t v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc{} || r.ptr != text.data() + text.size() || v > max) return false;
  *out = v;
  return true;
}

// A mavlink-router configuration is a few KiB; this is far past any real one.
constexpr size_t kMaxConfigFile = 16u << 20;

void load_config_file(const fs::path& file, Config& config) {
  std::string error;
  const auto text = read_regular_file(file.string(), kMaxConfigFile, &error);
  if (!text) throw ConfigError(error);
  load_config_text(*text, file.string(), config);
}

namespace {

// One reader for every way a section arrives: the lines of a file, or a section built from a
// JSON body. It knows the section it is in and the keys given there so far.
class SectionReader {
 public:
  explicit SectionReader(Config& config) : config_(config) {}

  // `inner`: what stands between the brackets ("UdpEndpoint gcs"); `at` is where it stands.
  void begin(std::string_view inner, const Where& at) {
    keys_seen_.clear();
    const auto space = inner.find_first_of(" \t");
    const std::string type = lower(inner.substr(0, space));
    const std::string name = space == std::string_view::npos ? "" : std::string(trim(inner.substr(space)));
    const Where w{at.file, at.line, "[" + std::string(inner) + "]"};
    if (type == "general" || type == "http") {
      if (!name.empty()) w.fail(type == "general" ? "[General] takes no name" : "[Http] takes no name");
      section_ = type == "general" ? Section::kGeneral : Section::kHttp;
      endpoint_ = nullptr;
      return;
    }
    if (name.empty()) w.fail("this section needs a name, as [" + std::string(inner) + " my-name]");
    if (name.find_first_of(" \t") != std::string::npos) w.fail("a section name has no blanks");
    if (const std::string why = text_problem(name, kMaxName); !why.empty()) w.fail("the name " + why);
    section_ = Section::kEndpoint;
    type_ = section_type(type);
    if (type_ == nullptr)
      w.fail(
          "unknown section type (General, Http, UartEndpoint, UdpEndpoint, TcpEndpoint, TcpServerEndpoint, "
          "WebSocketEndpoint, NatsEndpoint)");
    endpoint_ = &endpoint_for(config_, type_->kind, type, name, at);
    if (type_->named != nullptr) type_->named(w, name, *endpoint_);
  }

  // `raw_key` as written; `at` names the key's place.
  void set(std::string_view raw_key, std::string_view value, const Where& at) {
    const std::string key = lower(trim(raw_key));
    const Where w{at.file, at.line, std::string(trim(raw_key))};
    if (key.empty()) w.fail("empty key");
    if (const std::string why = text_problem(key, kMaxKey); !why.empty()) w.fail("the key " + why);
    if (const std::string why = text_problem(value, kMaxValue); !why.empty())
      w.fail(quoted(value) + ": the value " + why);
    // Twice in one section is a mistake (which one was meant?); a later file or section of the
    // same name may change it, as a conf directory does.
    if (const auto [first_at, first] = keys_seen_.try_emplace(key, at.line); !first) {
      w.fail(at.line == 0 ? "given twice"
                          : "given twice in this section (first on line " + std::to_string(first_at->second) + ")");
    }
    switch (section_) {
      case Section::kNone: w.fail("key outside of any section");
      case Section::kGeneral: set_general(w, key, value, config_); break;
      case Section::kHttp: set_http(w, key, value, config_.http); break;
      case Section::kEndpoint: {
        const auto& own = type_->keys();
        auto it = own.find(key);
        if (it == own.end() && !type_->common_keys) w.fail("unknown key in this section");
        if (it == own.end()) {
          it = common_endpoint_keys().find(key);
          if (it == common_endpoint_keys().end()) w.fail("unknown key in this section");
        }
        it->second(w, value, *endpoint_);
        endpoint_->keys += key + "=" + std::string(value) + "\n";
      }
    }
  }

 private:
  // Names and keys are short words; a value is a path, a list or a filter, never this long.
  static constexpr size_t kMaxName = 64, kMaxKey = 64, kMaxValue = 16384;
  enum class Section { kNone, kGeneral, kHttp, kEndpoint };
  Config& config_;
  Section section_ = Section::kNone;
  EndpointConfig* endpoint_ = nullptr;
  const SectionType* type_ = nullptr;     // the endpoint section's
  std::map<std::string, int> keys_seen_;  // in the section being read: key -> its line
};

}  // namespace

std::string text_problem(std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) return "is longer than " + std::to_string(max_bytes) + " bytes";
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return "holds a control character (one printable line)";
    // UTF-8: the lead byte says how many continuation bytes follow; no overlong forms, no
    // surrogates, nothing past U+10FFFF.
    size_t more = 0;
    uint32_t cp = c;
    if (c >= 0x80) {
      if (c >= 0xC2 && c <= 0xDF) {
        more = 1, cp = c & 0x1F;
      } else if (c >= 0xE0 && c <= 0xEF) {
        more = 2, cp = c & 0x0F;
      } else if (c >= 0xF0 && c <= 0xF4) {
        more = 3, cp = c & 0x07;
      } else {
        return "is not UTF-8";
      }
      if (i + more >= text.size()) return "is not UTF-8";  // cut off
      for (size_t k = 1; k <= more; ++k) {
        const auto b = static_cast<unsigned char>(text[i + k]);
        if ((b & 0xC0) != 0x80) return "is not UTF-8";
        cp = cp << 6 | (b & 0x3F);
      }
      if ((more == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
          (more == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
        return "is not UTF-8";
    }
    i += 1 + more;
  }
  return "";
}

void load_config_text(std::string_view text, const std::string& file_name, Config& config) {
  std::istringstream in{std::string(text)};
  SectionReader reader(config);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string_view l = trim(line);
    if (l.empty() || l[0] == '#' || l[0] == ';') continue;
    const Where here{file_name, number, ""};
    if (l.find('\0') != std::string_view::npos) {
      throw ConfigError(here.text() + ": a NUL byte in the line (a value would be cut at it)");
    }
    if (l[0] == '[') {
      if (l.back() != ']') Where{file_name, number, quoted(l)}.fail("a section header ends with ']'");
      reader.begin(trim(l.substr(1, l.size() - 2)), here);
      continue;
    }
    const auto eq = l.find('=');
    if (eq == std::string_view::npos) Where{file_name, number, quoted(l)}.fail("expected Key = Value");
    reader.set(l.substr(0, eq), trim(l.substr(eq + 1)), here);
  }
}

void load_config_section(const ConfigSection& section, const std::string& source, Config& config) {
  SectionReader reader(config);
  const Where here{source, 0, ""};
  if (const std::string why = text_problem(section.type, 64); !why.empty()) here.fail("the section " + why);
  reader.begin(trim(section.type + " " + section.name), here);
  for (const auto& [key, value] : section.keys) reader.set(key, value, here);
}

void load_config_dir(const fs::path& dir, Config& config) {
  std::error_code ec;
  // As mavlink-router: a conf directory that is not there is nothing to read (its default often
  // is not), said as a warning; something else in its place is a mistake.
  if (!fs::exists(dir, ec)) {
    config.warnings.push_back(dir.string() + ": no such configuration directory; reading none");
    return;
  }
  if (!fs::is_directory(dir, ec)) throw ConfigError(dir.string() + ": not a directory");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".conf") continue;
    if (entry.is_regular_file(ec))
      files.push_back(entry.path());
    else
      config.warnings.push_back(entry.path().string() + ": not a regular file: skipped");
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) load_config_file(f, config);
}

void finish_config(Config& config) {
  uint16_t next_udp_port = 14550;
  if (config.general.tcp_server.spec.port != 0) check_endpoint(config.general.tcp_server, next_udp_port);
  for (auto& e : config.endpoints) check_endpoint(e, next_udp_port);
  const GeneralConfig& g = config.general;
  if (g.log_telemetry && g.log_dir.empty())
    config.warnings.push_back("LogTelemetry needs Log = <directory>: no telemetry log will be written");
}

}  // namespace mavswitch::config
