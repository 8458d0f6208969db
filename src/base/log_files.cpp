#include "base/log_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace mavswitch::log_files {
namespace {

namespace fs = std::filesystem;

bool is_log(const fs::path& p) { return kind_of(p) != nullptr; }

bool writable(const fs::path& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0222) != 0;
}

}  // namespace

const char* kind_of(const fs::path& file) {
  if (!index_of(file)) return nullptr;
  const auto ext = file.extension();
  return ext == ".tlog" ? "telemetry" : ext == ".ulg" ? "ULog" : ext == ".bin" ? "dataflash" : nullptr;
}

bool finished(const fs::path& file) { return !writable(file); }

std::optional<unsigned> index_of(const fs::path& file) {
  const std::string name = file.filename().string();
  if (name.size() < 6 || name[5] != '-') return std::nullopt;
  unsigned index = 0;
  for (size_t i = 0; i < 5; ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    index = index * 10 + static_cast<unsigned>(name[i] - '0');
  }
  return index;
}

fs::path next_name(const fs::path& dir, const std::string& extension) {
  unsigned next = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (const auto index = index_of(e.path())) next = std::max(next, *index + 1);
  }
  char stamp[32];
  const time_t t = time(nullptr);
  tm local;
  localtime_r(&t, &local);
  strftime(stamp, sizeof stamp, "%Y-%m-%d_%H-%M-%S", &local);
  char index[16];
  std::snprintf(index, sizeof index, "%05u", next);
  return dir / (std::string(index) + "-" + stamp + extension);
}

int create(const fs::path& path) { return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644); }

void finish(const fs::path& path) { ::chmod(path.c_str(), 0444); }

void finish_leftovers(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (is_log(e.path()) && writable(e.path())) finish(e.path());
  }
}

size_t retention_limit(unsigned max_log_files, bool about_to_open) {
  if (max_log_files == 0) return SIZE_MAX;
  return about_to_open ? max_log_files - 1 : max_log_files;
}

bool enforce_retention(const fs::path& dir, size_t keep_at_most, uint64_t min_free) {
  std::vector<std::pair<unsigned, fs::path>> finished;
  size_t open = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!is_log(e.path())) continue;
    if (writable(e.path()))
      ++open;  // being written: never deleted, but it counts
    else
      finished.emplace_back(*index_of(e.path()), e.path());
  }
  std::sort(finished.begin(), finished.end());
  size_t i = 0;
  while (i < finished.size() && finished.size() - i + open > keep_at_most) fs::remove(finished[i++].second, ec);
  while (min_free > 0 && free_bytes(dir) < min_free && i < finished.size()) fs::remove(finished[i++].second, ec);
  return min_free > 0 && free_bytes(dir) < min_free;
}

uint64_t free_bytes(const fs::path& dir) {
  struct statvfs st;
  if (statvfs(dir.c_str(), &st) != 0) return UINT64_MAX;
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

}  // namespace mavswitch::log_files
