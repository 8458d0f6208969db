// The frame path's system calls, made without glibc's cancellation wrapper. glibc makes read,
// writev, epoll_wait and the mmsg calls cancellation points: once the process has a second
// thread (the window's, the blocking-work thread), each call switches asynchronous cancellation
// on and off around the kernel's, about 45 instructions, which at one frame a wake-up is a few
// percent of the frame's cost. Nothing here is ever cancelled (mavswitch never calls
// pthread_cancel), so these go straight to the kernel; results and errno are the same.
// Under the sanitizers the libc calls stay: they check the buffers and read the calls as
// synchronisation on the descriptor.
// Not built: a wrapper per call site. Only the calls a frame or a wake-up makes are here.
#pragma once

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>

#include "base/sanitizers.hpp"

namespace mavswitch::transport::kernel {

#define MAVSWITCH_KERNEL_CALLS (!MAVSWITCH_SANITIZED)

inline ssize_t read(int fd, void* buffer, size_t size) noexcept {
#if MAVSWITCH_KERNEL_CALLS
  return ::syscall(SYS_read, fd, buffer, size);
#else
  return ::read(fd, buffer, size);
#endif
}

inline ssize_t write(int fd, const void* bytes, size_t size) noexcept {
#if MAVSWITCH_KERNEL_CALLS
  return ::syscall(SYS_write, fd, bytes, size);
#else
  return ::write(fd, bytes, size);
#endif
}

inline ssize_t writev(int fd, const iovec* iov, int count) noexcept {
#if MAVSWITCH_KERNEL_CALLS
  return ::syscall(SYS_writev, fd, iov, count);
#else
  return ::writev(fd, iov, count);
#endif
}

// epoll_pwait with no signal mask: the one every architecture has (arm64 has no epoll_wait).
inline int epoll_wait(int epoll_fd, epoll_event* events, int max, int timeout_ms) noexcept {
#if MAVSWITCH_KERNEL_CALLS
  return static_cast<int>(::syscall(SYS_epoll_pwait, epoll_fd, events, max, timeout_ms, nullptr, _NSIG / 8));
#else
  return ::epoll_wait(epoll_fd, events, max, timeout_ms);
#endif
}

// Without a timeout (the only way the frame path calls them).
inline int recvmmsg(int fd, mmsghdr* messages, unsigned count, int flags) noexcept {
#if MAVSWITCH_KERNEL_CALLS
  return static_cast<int>(::syscall(SYS_recvmmsg, fd, messages, count, flags, nullptr));
#else
  return ::recvmmsg(fd, messages, count, flags, nullptr);
#endif
}

inline int sendmmsg(int fd, mmsghdr* messages, unsigned count, int flags) noexcept {
#if MAVSWITCH_KERNEL_CALLS
  return static_cast<int>(::syscall(SYS_sendmmsg, fd, messages, count, flags));
#else
  return ::sendmmsg(fd, messages, count, flags);
#endif
}

}  // namespace mavswitch::transport::kernel
