// The one place an exception that escaped a request, a posted job, a timer or a component's
// handler ends: counted, said in one throttled line, and the thread goes on. A peer's bytes or a
// client's request must never stop the router; what threw is a bug to fix, so it is loud in the
// log and in /metrics (mavswitch_faults_total), but it costs only the work that threw.
#pragma once

#include <cstdint>
#include <exception>
#include <string_view>

namespace mavswitch::fault {

// Counts and logs the exception being handled (call it inside a catch block); `where` names
// the boundary ("http request", "router job", "component handler").
void caught(std::string_view where) noexcept;
// How many were caught since the program started (any thread).
uint64_t count() noexcept;

}  // namespace mavswitch::fault
