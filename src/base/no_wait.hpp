// Threads that must never wait for another thread's loop (the window's, which serves every
// client: one wait would hold them all). Such a thread marks itself once; each call that waits
// for a loop (Router::run_on_loop, run_on_worker) checks the mark and, in builds that check
// owners (MAVSWITCH_CHECK_OWNERS: Debug and the sanitizers), aborts naming the thread.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace mavswitch::no_wait {

inline thread_local const char* marked_thread = nullptr;

// The calling thread may not wait from now on; `who` names it ("the window's thread").
inline void mark(const char* who) noexcept { marked_thread = who; }

inline void check(const char* what) noexcept {
#ifdef MAVSWITCH_CHECK_OWNERS
  if (marked_thread == nullptr) return;
  std::fprintf(stderr, "mavswitch: %s waited for a loop in %s; it may not\n", marked_thread, what);
  std::abort();
#else
  (void)what;
#endif
}

}  // namespace mavswitch::no_wait
