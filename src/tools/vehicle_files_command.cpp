// `mavswitch mission get|put|clear`, `mavswitch params save|load`, `mavswitch files
// ls|get|put|rm` and `mavswitch logs onboard|download ID`: a vehicle's mission (QGroundControl's .plan, or QGC WPL 110
// for a .waypoints or .txt file), its parameters (Mission Planner's .param, QGroundControl's .params) and its files to
// and from files here, through the router's /v1/vehicles/SYS/COMP/mission,
// .../parameters and .../files.
#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tools/commands.hpp"

namespace mavswitch::tools {
namespace {

bool ends_with(const std::string& s, const char* tail) { return s.ends_with(tail); }

// Says why it could not.
bool read_file(const std::string& path, std::string* text) {
  if (path == "-") {
    *text = std::string(std::istreambuf_iterator<char>(std::cin), {});
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "mavswitch: cannot read %s\n", path.c_str());
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  *text = s.str();
  return true;
}

bool write_file(const std::string& path, const std::string& text) {
  if (path == "-") return std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  return static_cast<bool>(out << text);
}

// What the router said: the body on success (written or printed), the error on stderr.
int finish(const ApiReply& r, const std::function<int(const std::string&)>& ok) {
  if (r.status == 0) {
    std::fprintf(stderr, "mavswitch: %s\n", r.error.c_str());
    return 1;
  }
  if (r.status >= 300) {
    std::fprintf(stderr, "mavswitch: HTTP %d: %s", r.status, r.body.c_str());
    return 1;
  }
  return ok(r.body);
}

// A GET's body to `file`.
int save_to(const std::string& file, const ApiReply& r) {
  return finish(r, [&](const std::string& body) {
    if (write_file(file, body)) return 0;
    std::fprintf(stderr, "mavswitch: cannot write %s\n", file.c_str());
    return 1;
  });
}

std::string query(const std::vector<std::pair<std::string, std::string>>& parts) {
  std::string q;
  for (const auto& [k, v] : parts)
    if (!v.empty()) q += (q.empty() ? "?" : "&") + k + "=" + v;
  return q;
}

// A vehicle's path in the router's URL: '/' and '@' as they are, what a URL cannot hold escaped.
std::string url_path(const std::string& remote) {
  std::string out;
  for (const char c : remote.starts_with('/') ? remote.substr(1) : remote) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || std::strchr("/@-._~", c) != nullptr)
      out += c;
    else
      out += fmt::format("%{:02X}", u);
  }
  return out;
}

}  // namespace

int run_files(const VehicleFileOptions& o) {
  const std::string path = fmt::format("/v1/vehicles/{}/{}/files/{}", o.system, o.component, url_path(o.remote));
  ApiTarget target = o.target;
  target.timeout_ms = 600'000;  // megabytes through a radio
  const auto print = [](const std::string& body) {
    std::fputs(body.c_str(), stdout);
    return 0;
  };
  if (o.action == "get") return save_to(o.file, api_call(target, "GET", path));
  if (o.action == "rm") return finish(api_call(target, "DELETE", path), print);
  if (o.action == "put") {
    std::string bytes;
    if (!read_file(o.file, &bytes)) return 1;
    return finish(api_call(target, "PUT", path, bytes), print);
  }
  // ls: a directory's entries, a line each (a directory's name ends with '/'); a file, its size.
  return finish(api_call(target, "GET", path), [&](const std::string& body) {
    const auto listing = nlohmann::json::parse(body, nullptr, false);
    if (!listing.is_object() || !listing.contains("entries")) {
      std::printf("%s\t%zu bytes (a file)\n", o.remote.c_str(), body.size());
      return 0;
    }
    for (const auto& e : listing["entries"]) {
      const std::string name = e.value("name", "");
      if (e.value("type", "") == "directory")
        std::printf("%s/\n", name.c_str());
      else
        std::printf("%s\t%llu\n", name.c_str(), static_cast<unsigned long long>(e.value("size", uint64_t{0})));
    }
    return 0;
  });
}

int run_onboard_logs(const VehicleFileOptions& o) {
  const std::string path = fmt::format("/v1/vehicles/{}/{}/logs", o.system, o.component);
  ApiTarget target = o.target;
  target.timeout_ms = 3'600'000;  // a flight's log through a 57,600-baud radio takes many minutes
  if (o.action == "download") return save_to(o.file, api_call(target, "GET", path + "/" + o.remote));
  return finish(api_call(target, "GET", path), [](const std::string& body) {
    const auto list = nlohmann::json::parse(body, nullptr, false);
    if (!list.is_object() || !list.contains("logs")) {
      std::fputs(body.c_str(), stdout);
      return 0;
    }
    std::printf("%-6s %12s  %s\n", "ID", "BYTES", "TIME (UTC)");
    for (const auto& l : list["logs"]) {
      const auto t = static_cast<std::time_t>(l.value("time_utc", uint64_t{0}));
      char when[32] = "-";
      if (t > 0) std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::gmtime(&t));
      std::printf("%-6llu %12llu  %s\n", static_cast<unsigned long long>(l.value("id", uint64_t{0})),
                  static_cast<unsigned long long>(l.value("size", uint64_t{0})), when);
    }
    return 0;
  });
}

int run_mission(const VehicleFileOptions& o) {
  const std::string path = fmt::format("/v1/vehicles/{}/{}/mission", o.system, o.component);
  const std::string format = !o.format.empty()                                              ? o.format
                             : ends_with(o.file, ".waypoints") || ends_with(o.file, ".txt") ? "wpl"
                                                                                            : "";
  const std::string q = query({{"type", o.type}, {"format", format}});
  ApiTarget target = o.target;
  target.timeout_ms = 300'000;  // hundreds of items through a lossy radio
  if (o.action == "clear") {
    return finish(api_call(target, "DELETE", path + query({{"type", o.type}})), [](const std::string& body) {
      std::fputs(body.c_str(), stdout);
      return 0;
    });
  }
  if (o.action == "get") {
    return save_to(o.file, api_call(target, "GET", path + q));
  }
  std::string text;
  if (!read_file(o.file, &text)) return 1;
  return finish(api_call(target, "PUT", path + q, text), [](const std::string& body) {
    std::fputs(body.c_str(), stdout);
    return 0;
  });
}

int run_params(const VehicleFileOptions& o) {
  const std::string path = fmt::format("/v1/vehicles/{}/{}/parameters", o.system, o.component);
  ApiTarget target = o.target;
  target.timeout_ms = 300'000;
  if (o.action == "save") {
    const std::string format = !o.format.empty() ? o.format : ends_with(o.file, ".params") ? "qgc" : "param";
    return save_to(o.file, api_call(target, "GET", path + "?format=" + format));
  }
  std::string text;
  if (!read_file(o.file, &text)) return 1;
  const ApiReply r = api_call(target, "PUT", path, text);
  if (r.status == 422) {  // some failed: what took and what did not, and a failing exit
    std::fputs(r.body.c_str(), stdout);
    return 1;
  }
  return finish(r, [](const std::string& body) {
    std::fputs(body.c_str(), stdout);
    return 0;
  });
}

}  // namespace mavswitch::tools
