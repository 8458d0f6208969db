// The process's one thread for work that blocks (a host name lookup, a reload that waits for the
// router): jobs run there one at a time, in the order given, and post what they learn back to
// the loop that asked. The thread starts with the first job and is never joined: a lookup stuck
// in the resolver must not hold up the process's exit. Not built: a pool. Lookups happen when
// an endpoint (re)connects and reloads when the operator asks; one thread keeps up with both.
#pragma once

#include <functional>

namespace mavswitch::blocking_work {

// Any thread. `job` must not throw, and must not wait for another job.
void run(std::function<void()> job);
// True on the blocking-work thread.
bool on_thread() noexcept;

}  // namespace mavswitch::blocking_work
