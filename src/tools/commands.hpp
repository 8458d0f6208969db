// The subcommands of `mavswitch`. Each returns the process exit status.
#pragma once

#include <string>

namespace mavswitch::tools {

int run_dialect(const std::string& xml_path);

struct DumpOptions {
  std::string input;        // a file, or "-" for standard input
  std::string dialect_xml;  // empty: the built-in (generated) dialect
  bool json = false;
  bool tlog = false;  // forced; otherwise detected from a .tlog extension
};
int run_dump(const DumpOptions& options);

// The logs in a directory (telemetry and flight logs): file, kind, size, finished or not.
int run_logs(const std::string& dir, bool json);

}  // namespace mavswitch::tools
