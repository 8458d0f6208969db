#include "logs/log_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/log.hpp"
#include "base/log_files.hpp"

namespace mavswitch::logs {

bool LogFile::open(const std::filesystem::path& dir, const std::string& extension) {
  close();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);  // it may have been deleted under us
  path_ = log_files::next_name(dir, extension);
  fd_ = log_files::create(path_);
  appended_ = 0;
  written_ = false;
  return fd_ >= 0;
}

int LogFile::write_all(std::span<const uint8_t> bytes, const uint64_t* offset) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = offset
                          ? ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(*offset + done))
                          : ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      written_ = true;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return n == 0 ? ENOSPC : errno;
    }
  }
  return 0;
}

int LogFile::append(std::span<const uint8_t> bytes) {
  const int err = write_all(bytes, nullptr);
  if (err == 0) {
    appended_ += bytes.size();
  } else if (::ftruncate(fd_, static_cast<off_t>(appended_)) != 0) {  // back to the last whole record
    log::error("{}: cannot cut back to its last whole record: {}", path_.string(), std::strerror(errno));
  }
  return err;
}

int LogFile::write_at(std::span<const uint8_t> bytes, uint64_t offset) { return write_all(bytes, &offset); }

void LogFile::sync() {
  if (fd_ >= 0) ::fsync(fd_);
}

void LogFile::close() {
  if (fd_ < 0) return;
  const bool empty = !written_ || ::lseek(fd_, 0, SEEK_END) <= 0;
  ::fsync(fd_);
  ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  if (empty)
    std::filesystem::remove(path_, ec);
  else
    log_files::finish(path_);
}

}  // namespace mavswitch::logs
