// Counts heap allocations made by the calling thread between start() and stop(): the test
// binary replaces the global operator new to do it.
#pragma once

#include <cstdint>

namespace mavswitch::test {

class AllocationCounter {
 public:
  AllocationCounter();   // starts counting on this thread
  ~AllocationCounter();  // stops
  uint64_t count() const;
};

}  // namespace mavswitch::test
