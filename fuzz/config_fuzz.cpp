// The INI configuration reader on arbitrary text, as a config file gives it and as the HTTP
// API's POST /api/v1/endpoints does (a section as text, or as a JSON object turned into one).
#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "window/http_api.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mavswitch::daemon::Config config;
  std::string text, error;
  if (!mavswitch::daemon::section_text_of(std::string(reinterpret_cast<const char*>(data), size), &text, &error))
    return 0;
  try {
    mavswitch::daemon::load_config_text(text, "fuzz.conf", config);
    mavswitch::daemon::finish_config(config);
  } catch (const mavswitch::daemon::ConfigError&) {
  }
  return 0;
}
