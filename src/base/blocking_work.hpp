// The process's one thread for work that blocks (a host name lookup, a reload that waits for the
// router): jobs run there one at a time, in the order given (a Handover the thread waits on),
// and post what they learn back to the loop that asked. The thread starts with the first job
// and is never joined: a lookup stuck in the resolver must not hold up the process's exit. Not
// built: a pool. Lookups happen when an endpoint (re)connects and reloads when the operator
// asks; one thread keeps up with both.
#pragma once

#include <functional>

namespace mavswitch::blocking_work {

// Any thread. `job` must not throw, and must not wait for another job.
void run(std::function<void()> job);
// True on the blocking-work thread.
bool on_thread() noexcept;
// Aborts, saying `what`, off the blocking-work thread (see MAVSWITCH_ASSERT_BLOCKING_WORK).
void assert_on_thread(const char* what) noexcept;

}  // namespace mavswitch::blocking_work

// Checked builds (as MAVSWITCH_ASSERT_OWNER): what must run on the blocking-work thread says so.
#ifdef MAVSWITCH_CHECK_OWNERS
#define MAVSWITCH_ASSERT_BLOCKING_WORK(what) ::mavswitch::blocking_work::assert_on_thread(what)
#else
#define MAVSWITCH_ASSERT_BLOCKING_WORK(what) static_cast<void>(0)
#endif
