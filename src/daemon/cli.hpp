// The mavswitchd command line: mavlink-routerd's flags where they overlap.
#pragma once

#include <optional>
#include <string>

#include "config/config.hpp"

namespace mavswitch::daemon {

struct CommandLine {
  config::Config config;
  bool show_version = false;
};

// Parses argv into a Config: configuration files first (-c, -d, or the default locations),
// then the flags on top. Returns nullopt after printing help or an error (exit_code set).
std::optional<CommandLine> parse_command_line(int argc, char** argv, int* exit_code);

}  // namespace mavswitch::daemon
