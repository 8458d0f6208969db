#include "unit/alloc_counter.hpp"

#include <cstdlib>
#include <new>

namespace {
thread_local bool t_counting = false;
thread_local uint64_t t_allocations = 0;
}  // namespace

void* operator new(size_t n) {
  if (t_counting) ++t_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace mavswitch::test {

AllocationCounter::AllocationCounter() {
  t_allocations = 0;
  t_counting = true;
}
AllocationCounter::~AllocationCounter() { t_counting = false; }
uint64_t AllocationCounter::count() const { return t_allocations; }

}  // namespace mavswitch::test
