// mavswitch logs DIR: the logs in a directory, oldest first, with their kind, size and whether
// they are finished (read-only) or still being written, as a download script would sort them.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "base/log_files.hpp"
#include "tools/commands.hpp"

namespace mavswitch::tools {

int run_logs(const std::string& dir, bool json) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fmt::print(stderr, "mavswitch logs: {}: not a directory\n", dir);
    return 2;
  }
  std::vector<std::pair<unsigned, fs::path>> logs;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec) && log_files::kind_of(e.path()))
      logs.emplace_back(*log_files::index_of(e.path()), e.path());
  }
  std::sort(logs.begin(), logs.end());
  if (!json) fmt::print("{:<34} {:<10} {:>12}  {}\n", "file", "kind", "bytes", "state");
  for (const auto& [index, path] : logs) {
    const uintmax_t size = fs::file_size(path, ec);
    const char* state = log_files::finished(path) ? "finished" : "writing";
    if (json) {
      fmt::print("{{\"file\":\"{}\",\"index\":{},\"kind\":\"{}\",\"bytes\":{},\"state\":\"{}\"}}\n",
                 path.filename().string(), index, log_files::kind_of(path), size, state);
    } else {
      fmt::print("{:<34} {:<10} {:>12}  {}\n", path.filename().string(), log_files::kind_of(path), size, state);
    }
  }
  return 0;
}

}  // namespace mavswitch::tools
