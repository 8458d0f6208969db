#include "daemon/signing_state.hpp"

#include <fstream>
#include <sstream>

#include "base/file_read.hpp"
#include "base/log.hpp"

namespace mavswitch::daemon {
namespace {

// The signing gate of the endpoint called `name`, if it signs.
routing::SignatureGate* gate_of(const Router& router, const std::string& name) {
  for (size_t i = 0; i < router.endpoint_count(); ++i) {
    if (router.endpoint_spec(i).name == name) return router.endpoint_policy(i).signing.get();
  }
  return nullptr;
}

// After a restart our clock resumes at least this far past the last value saved, covering
// what was signed after the last save.
constexpr uint64_t kSaveInterval = 60ull * 100'000;

}  // namespace

bool load_signing_state(const std::filesystem::path& file, Router& router, std::string* error) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return true;  // the first start: nothing saved yet
  // One line per signing stream and a clock: a few KiB even for a large fleet.
  constexpr size_t kMaxStateFile = 1u << 20;
  const auto text = read_regular_file(file.string(), kMaxStateFile, error);
  if (!text) return false;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "clock") {
      uint64_t last = 0;
      if (words >> last) router.restore_signing_clock(last + kSaveInterval);
    } else if (kind == "stream") {
      std::string endpoint;
      unsigned link = 0, sys = 0, comp = 0;
      uint64_t ts = 0;
      if (!(words >> endpoint >> link >> sys >> comp >> ts) || link > 255 || sys > 255 || comp > 255) continue;
      if (auto* gate = gate_of(router, endpoint)) {
        gate->restore({static_cast<uint8_t>(link), static_cast<uint8_t>(sys), static_cast<uint8_t>(comp), ts});
      }
    }
  }
  return true;
}

bool save_signing_state(const std::filesystem::path& file, const Router& router, std::string* error) {
  std::ostringstream out;
  out << "clock " << router.signing_clock() << "\n";
  for (size_t i = 0; i < router.endpoint_count(); ++i) {
    const auto* gate = router.endpoint_policy(i).signing.get();
    if (gate == nullptr) continue;
    for (const auto& s : gate->streams()) {
      out << "stream " << router.endpoint_spec(i).name << " " << unsigned{s.link_id} << " " << unsigned{s.sysid} << " "
          << unsigned{s.compid} << " " << s.timestamp << "\n";
    }
  }
  const auto tmp = std::filesystem::path(file.string() + ".tmp");
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << out.str();
    if (!f.flush()) {
      *error = tmp.string() + ": cannot write";
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    *error = file.string() + ": " + ec.message();
    return false;
  }
  return true;
}

}  // namespace mavswitch::daemon
