// `mavswitch dialect FILE.xml`: one line per message, sorted by id:
//   id name crc_extra min_len max_len target_system_offset target_component_offset
#include <fmt/format.h>

#include <cstdio>

#include "dialect/loader.hpp"
#include "tools/commands.hpp"

namespace mavswitch::tools {

namespace {
std::string offset_text(int16_t offset) { return offset < 0 ? "-" : std::to_string(offset); }
}  // namespace

int run_dialect(const std::string& xml_path) {
  dialect::Dialect d;
  try {
    d = dialect::load_dialect(xml_path);
  } catch (const dialect::DialectError& e) {
    fmt::print(stderr, "mavswitch dialect: {}\n", e.what());
    return 1;
  }
  fmt::memory_buffer out;
  for (const dialect::MessageDef& m : d.messages) {
    fmt::format_to(std::back_inserter(out), "{} {} {} {} {} {} {}\n", m.id, m.name, m.crc_extra, m.min_len, m.max_len,
                   offset_text(m.target_system_offset), offset_text(m.target_component_offset));
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace mavswitch::tools
