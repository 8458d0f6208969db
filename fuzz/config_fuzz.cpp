// The INI configuration reader on arbitrary text.
#include <cstdint>
#include <string_view>

#include "daemon/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mavswitch::daemon::Config config;
  try {
    mavswitch::daemon::load_config_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.conf",
                                        config);
    mavswitch::daemon::finish_config(config);
  } catch (const mavswitch::daemon::ConfigError&) {
  }
  return 0;
}
