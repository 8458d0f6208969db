// mavswitch — the command line tool: inspect dialects and decode MAVLink streams and logs.
#include <CLI/CLI.hpp>

#include "tools/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"mavswitch: MAVLink tools (dialect tables, stream and tlog decoding, log directories)"};
  app.require_subcommand(1);

  std::string xml;
  auto* dialect = app.add_subcommand("dialect",
                                     "Print each message of a dialect: id name crc_extra min_len max_len "
                                     "target_system_offset target_component_offset");
  dialect->add_option("FILE.xml", xml, "MAVLink XML dialect")->required();

  mavswitch::tools::DumpOptions dump_options;
  auto* dump = app.add_subcommand("dump", "Decode a raw MAVLink stream or a .tlog, one line per frame");
  dump->add_option("--dialect", dump_options.dialect_xml,
                   "Decode with this XML dialect, loaded at run time (default: the built-in dialect)");
  dump->add_flag("--json", dump_options.json, "One JSON object per line");
  dump->add_flag("--tlog", dump_options.tlog, "Input is a telemetry log (default: when the name ends in .tlog)");
  dump->add_option("FILE", dump_options.input, "Input file, or - for standard input")->required();

  std::string logs_dir;
  bool logs_json = false;
  auto* logs = app.add_subcommand("logs", "List a log directory: each log's kind, size, and finished or still written");
  logs->add_option("DIR", logs_dir, "The Log directory")->required();
  logs->add_flag("--json", logs_json, "One JSON object per line");

  CLI11_PARSE(app, argc, argv);
  if (dialect->parsed()) return mavswitch::tools::run_dialect(xml);
  if (logs->parsed()) return mavswitch::tools::run_logs(logs_dir, logs_json);
  return mavswitch::tools::run_dump(dump_options);
}
