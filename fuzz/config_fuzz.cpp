// The INI configuration reader on arbitrary text, as a config file gives it and as the HTTP
// API's POST /api/v1/endpoints does (INI text, or a JSON object read as one section).
#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "window/http_api.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace config = mavswitch::config;
  namespace window = mavswitch::window;
  const std::string body(reinterpret_cast<const char*>(data), size);
  config::Config read;
  try {
    if (window::is_json(body)) {
      std::string error;
      const auto section = window::section_of(body, &error);
      if (!section) return 0;
      config::load_config_section(*section, "fuzz.json", read);
    } else {
      config::load_config_text(body, "fuzz.conf", read);
    }
    config::finish_config(read);
  } catch (const config::ConfigError&) {
  }
  return 0;
}
