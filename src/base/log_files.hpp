// The log directory, shared by the telemetry log and the flight log: names as mavlink-router
// gives them (NNNNN-YYYY-MM-DD_HH-MM-SS.ext, the index one past the highest in the directory),
// finished files read-only, and retention (MaxLogFiles, MinFreeSpace) over every kind alike.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace mavswitch::log_files {

// The index a log's name starts with ("00042-2026-12-02_10-00-00.tlog"), if it has one.
std::optional<unsigned> index_of(const std::filesystem::path& file);
// A new name in dir for a log of this extension (".tlog", ".ulg", ".bin"): the index one past
// the highest of any log there, whatever its kind, so a directory shared with mavlink-router
// keeps counting.
std::filesystem::path next_name(const std::filesystem::path& dir, const std::string& extension);
// What kind of log a file is ("telemetry", "ULog", "dataflash"), or nullptr for a file that is
// not one of ours by its name.
const char* kind_of(const std::filesystem::path& file);
// Whether a log is finished (read-only), not still being written.
bool finished(const std::filesystem::path& file);
// Creates it (O_EXCL: never another's file); -1 with errno on failure.
int create(const std::filesystem::path& path);
// A finished log is made read-only, as mavlink-router leaves them: download scripts take the
// read-only ones, and retention deletes only those.
void finish(const std::filesystem::path& path);
// Logs a crash left writable are finished now. Once, at start, before any log is opened.
void finish_leftovers(const std::filesystem::path& dir);
// Deletes finished logs, lowest index first, until at most keep_at_most logs remain (those
// being written count, and are never deleted) and min_free bytes are free (0: no guard). True
// when min_free still does not hold.
bool enforce_retention(const std::filesystem::path& dir, size_t keep_at_most, uint64_t min_free);
// keep_at_most for MaxLogFiles (0: no limit), with room for one more when a log is to be opened.
size_t retention_limit(unsigned max_log_files, bool about_to_open);
uint64_t free_bytes(const std::filesystem::path& dir);

}  // namespace mavswitch::log_files
