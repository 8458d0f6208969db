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

}  // namespace mavswitch::tools
