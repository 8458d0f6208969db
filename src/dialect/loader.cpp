#include "dialect/loader.hpp"

#include <expat.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "base/file_read.hpp"

namespace mavswitch::dialect {
namespace {

namespace fs = std::filesystem;

std::string where(const std::string& file, long line) { return file + ":" + std::to_string(line) + ": "; }

// The official files are at most a few hundred KiB; anything past this is not a dialect.
constexpr size_t kMaxDialectFile = 64u << 20;

std::string read_file(const fs::path& path) {
  std::string error;
  auto bytes = read_regular_file(path.string(), kMaxDialectFile, &error);
  if (!bytes) throw DialectError(error);
  return std::move(*bytes);
}

const char* attr(const XML_Char** attrs, std::string_view key) {
  for (size_t i = 0; attrs[i] != nullptr; i += 2) {
    if (key == attrs[i]) return attrs[i + 1];
  }
  return nullptr;
}

bool parse_u64(std::string_view text, uint64_t& out) {
  // Values are decimal or 0x-prefixed hex; a few files write 2**N for bitmask bits.
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    auto r = std::from_chars(text.data() + 2, text.data() + text.size(), out, 16);
    return r.ec == std::errc{} && r.ptr == text.data() + text.size();
  }
  if (auto pos = text.find("**"); pos != std::string_view::npos) {
    uint64_t base = 0, exp = 0;
    if (!parse_u64(text.substr(0, pos), base) || !parse_u64(text.substr(pos + 2), exp) || exp > 63) return false;
    out = 1;
    while (exp--) out *= base;
    return true;
  }
  if (!text.empty() && text[0] == '-') {  // negative enum values (rare) keep their bit pattern
    int64_t v = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v, 10);
    out = static_cast<uint64_t>(v);
    return r.ec == std::errc{} && r.ptr == text.data() + text.size();
  }
  auto r = std::from_chars(text.data(), text.data() + text.size(), out, 10);
  return r.ec == std::errc{} && r.ptr == text.data() + text.size();
}

// Everything read so far, across files.
struct Accumulator {
  std::vector<MessageDef> messages;
  std::map<std::string, EnumDef> enums;
  std::vector<std::string> files;
  std::set<fs::path> seen;
};

// One file's parse: expat callbacks and the element context they need.
class FileReader {
 public:
  FileReader(Accumulator& acc, fs::path path) : acc_(acc), path_(std::move(path)), file_(path_.string()) {}

  void run() { run_text(read_file(path_)); }

  void run_text(std::string_view text) {
    XML_Parser p = XML_ParserCreate(nullptr);
    parser_ = p;
    XML_SetUserData(p, this);
    XML_SetElementHandler(p, &FileReader::on_start, &FileReader::on_end);
    XML_SetCharacterDataHandler(p, &FileReader::on_text);
    const auto status = XML_Parse(p, text.data(), static_cast<int>(text.size()), XML_TRUE);
    std::string error;
    if (status == XML_STATUS_ERROR && error_.empty()) {
      error = where(file_, static_cast<long>(XML_GetCurrentLineNumber(p))) +
              "malformed XML: " + XML_ErrorString(XML_GetErrorCode(p));
    }
    XML_ParserFree(p);
    if (!error_.empty()) throw DialectError(error_);
    if (!error.empty()) throw DialectError(error);
  }

  static void load_file(Accumulator& acc, const fs::path& path) {
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(path, ec);
    if (ec) canonical = path;
    if (!acc.seen.insert(canonical).second) return;  // already read: a repeat or a cycle
    acc.files.push_back(path.string());
    FileReader(acc, path).run();
  }

 private:
  static void on_start(void* self, const XML_Char* name, const XML_Char** attrs) {
    static_cast<FileReader*>(self)->start(name, attrs);
  }
  static void on_end(void* self, const XML_Char* name) { static_cast<FileReader*>(self)->end(name); }
  static void on_text(void* self, const XML_Char* s, int len) {
    auto* r = static_cast<FileReader*>(self);
    r->text_.append(s, static_cast<size_t>(len));
  }

  long line() const { return static_cast<long>(XML_GetCurrentLineNumber(parser_)); }

  // Records the first error and stops expat; run() throws it.
  void fail(const std::string& what) {
    if (error_.empty()) error_ = where(file_, line()) + what;
    XML_StopParser(parser_, XML_FALSE);
  }

  void start(std::string_view name, const XML_Char** attrs) {
    text_.clear();
    // A copy: the emplace below may reallocate the stack the parent's name lives in.
    const std::string parent = stack_.empty() ? std::string{} : stack_.back();
    stack_.emplace_back(name);
    if (name == "message" && parent == "messages") {
      start_message(attrs);
    } else if (name == "field" && in_message_) {
      start_field(attrs);
    } else if (name == "extensions" && in_message_) {
      in_extensions_ = true;
    } else if (name == "wip" && in_message_) {
      message_.wip = true;
    } else if (name == "deprecated" && in_message_) {
      message_.deprecated = true;
    } else if (name == "enum" && parent == "enums") {
      const char* n = attr(attrs, "name");
      if (n == nullptr) return fail("<enum> without a name");
      enum_ = &acc_.enums[n];
      enum_->name = n;
      if (const char* b = attr(attrs, "bitmask")) enum_->bitmask = std::string_view(b) == "true";
      next_value_ = enum_->entries.empty() ? 0 : enum_->entries.back().value + 1;
    } else if (name == "entry" && enum_ != nullptr) {
      start_entry(attrs);
    }
  }

  void end(std::string_view name) {
    if (name == "include" && stack_.size() == 2) {
      std::string inc = trim(text_);
      fs::path target = path_.parent_path() / inc;
      if (!fs::exists(target)) return fail("include not found: " + inc + " (looked for " + target.string() + ")");
      // Read it now, so what it defines is known before the rest of this file. Exceptions must
      // not cross expat's C frames: keep the (already located) message and stop this parse.
      try {
        load_file(acc_, target);
      } catch (const DialectError& e) {
        error_ = e.what();
        XML_StopParser(parser_, XML_FALSE);
      }
    } else if (name == "message" && in_message_) {
      finish_message();
    } else if (name == "enum") {
      enum_ = nullptr;
    }
    stack_.pop_back();
    text_.clear();
  }

  void start_message(const XML_Char** attrs) {
    const char* id = attr(attrs, "id");
    const char* n = attr(attrs, "name");
    if (id == nullptr || n == nullptr) return fail("<message> needs both id and name");
    uint64_t v = 0;
    if (!parse_u64(id, v) || v > 0xFFFFFF) return fail(std::string("message id is not a 24-bit number: ") + id);
    message_ = MessageDef{};
    message_.id = static_cast<uint32_t>(v);
    message_.name = n;
    message_.file = file_;
    message_.line = static_cast<int>(line());
    in_message_ = true;
    in_extensions_ = false;
  }

  void start_field(const XML_Char** attrs) {
    const char* type = attr(attrs, "type");
    const char* n = attr(attrs, "name");
    if (type == nullptr || n == nullptr) return fail("<field> in " + message_.name + " needs both type and name");
    FieldDef f;
    f.name = n;
    std::string_view t = type;
    if (auto open = t.find('['); open != std::string_view::npos) {
      uint64_t len = 0;
      const auto close = t.find(']', open);
      if (close != t.size() - 1 || !parse_u64(t.substr(open + 1, close - open - 1), len) || len == 0 || len > 255) {
        return fail("bad array type '" + std::string(t) + "' for field " + message_.name + "." + f.name);
      }
      f.array_len = static_cast<uint16_t>(len);
      t = t.substr(0, open);
    }
    const auto parsed = parse_type_name(t);
    if (!parsed)
      return fail("unknown field type '" + std::string(type) + "' for field " + message_.name + "." + f.name);
    f.type = *parsed;
    f.mavlink_version = t == "uint8_t_mavlink_version";
    f.extension = in_extensions_;
    if (const char* e = attr(attrs, "enum")) f.enum_name = e;
    if (const char* u = attr(attrs, "units")) f.units = u;
    if (const char* d = attr(attrs, "display")) f.display = d;
    for (const FieldDef& other : message_.fields) {
      if (other.name == f.name) return fail("field " + f.name + " appears twice in " + message_.name);
    }
    message_.fields.push_back(std::move(f));
  }

  void start_entry(const XML_Char** attrs) {
    const char* n = attr(attrs, "name");
    if (n == nullptr) return fail("<entry> without a name in enum " + enum_->name);
    uint64_t v = next_value_;
    if (const char* val = attr(attrs, "value")) {
      if (!parse_u64(val, v)) return fail(std::string("bad enum value '") + val + "' for " + n);
    }
    next_value_ = v + 1;
    auto& entries = enum_->entries;
    auto same = std::find_if(entries.begin(), entries.end(), [&](const EnumEntry& e) { return e.name == n; });
    if (same == entries.end()) entries.push_back({n, v});
  }

  void finish_message() {
    in_message_ = false;
    compute_layout(message_);
    if (message_.max_len > 255) return fail("message " + message_.name + " payload exceeds 255 bytes");
    for (const MessageDef& other : acc_.messages) {
      if (other.id == message_.id || other.name == message_.name) {
        return fail("message " + std::to_string(message_.id) + " " + message_.name + " conflicts with " +
                    std::to_string(other.id) + " " + other.name + " defined at " + other.file + ":" +
                    std::to_string(other.line));
      }
    }
    acc_.messages.push_back(std::move(message_));
  }

  static std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
  }

  Accumulator& acc_;
  fs::path path_;
  std::string file_;
  XML_Parser parser_ = nullptr;
  std::string error_;
  std::vector<std::string> stack_;
  std::string text_;
  MessageDef message_;
  bool in_message_ = false;
  bool in_extensions_ = false;
  EnumDef* enum_ = nullptr;
  uint64_t next_value_ = 0;
};

}  // namespace

namespace {

Dialect assemble(Accumulator acc, const fs::path& path) {
  Dialect d;
  d.name = path.stem().string();
  d.messages = std::move(acc.messages);
  std::sort(d.messages.begin(), d.messages.end(), [](const MessageDef& a, const MessageDef& b) { return a.id < b.id; });
  d.enums.reserve(acc.enums.size());
  for (auto& [name, e] : acc.enums) d.enums.push_back(std::move(e));
  d.files = std::move(acc.files);
  return d;
}

}  // namespace

Dialect load_dialect(const fs::path& path) {
  if (!fs::exists(path)) throw DialectError(path.string() + ": no such file");
  Accumulator acc;
  FileReader::load_file(acc, path);
  return assemble(std::move(acc), path);
}

Dialect load_dialect_text(std::string_view xml, const fs::path& path) {
  Accumulator acc;
  acc.seen.insert(path);
  acc.files.push_back(path.string());
  FileReader(acc, path).run_text(xml);
  return assemble(std::move(acc), path);
}

}  // namespace mavswitch::dialect
