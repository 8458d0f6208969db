#include "base/file_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mavswitch {

std::optional<std::string> read_regular_file(const std::string& path, size_t max_bytes, std::string* error) {
  // Non-blocking: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  std::optional<std::string> out;
  if (::fstat(fd, &st) != 0) {
    *error = path + ": " + std::strerror(errno);
  } else if (S_ISDIR(st.st_mode)) {
    *error = path + ": is a directory, not a file";
  } else if (!S_ISREG(st.st_mode)) {
    *error = path + ": is not a regular file (a device, a FIFO or a socket)";
  } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    *error = path + ": is larger than " + std::to_string(max_bytes) + " bytes";
  } else {
    std::string bytes(static_cast<size_t>(st.st_size), '\0');
    size_t got = 0;
    int failure = 0;
    while (got < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) failure = errno;
      if (n <= 0) break;  // an error, or the file shrank while we read: what was there
      got += static_cast<size_t>(n);
    }
    if (failure != 0) {
      *error = path + ": " + std::strerror(failure);
    } else {
      bytes.resize(got);
      out = std::move(bytes);
    }
  }
  ::close(fd);
  return out;
}

}  // namespace mavswitch
