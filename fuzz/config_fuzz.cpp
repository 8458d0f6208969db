// The INI configuration reader on arbitrary text, as a config file gives it and as the HTTP
// API's POST /api/v1/endpoints does (INI text, or a JSON object read as one section).
#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "window/http_api.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace daemon = mavswitch::daemon;
  const std::string body(reinterpret_cast<const char*>(data), size);
  daemon::Config config;
  try {
    if (daemon::is_json(body)) {
      std::string error;
      const auto section = daemon::section_of(body, &error);
      if (!section) return 0;
      daemon::load_config_section(*section, "fuzz.json", config);
    } else {
      daemon::load_config_text(body, "fuzz.conf", config);
    }
    daemon::finish_config(config);
  } catch (const daemon::ConfigError&) {
  }
  return 0;
}
