// The run-time dialect loader on arbitrary XML (includes resolve next to a path that holds
// nothing, so only the input itself is read).
#include <cstdint>
#include <string_view>

#include "dialect/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto d = mavswitch::dialect::load_dialect_text(std::string_view(reinterpret_cast<const char*>(data), size),
                                                         "/nonexistent/fuzz/input.xml");
    const auto table = d.message_table();
    for (const auto& m : d.messages) {
      if (table.find(m.id) == nullptr || m.max_len > 255 || m.min_len > m.max_len) __builtin_trap();
    }
  } catch (const mavswitch::dialect::DialectError&) {
  } catch (const std::invalid_argument&) {  // the table refuses duplicate ids
  }
  return 0;
}
