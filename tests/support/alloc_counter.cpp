#include "support/alloc_counter.hpp"

#include <cstddef>
#include <cstdlib>
#include <new>

namespace {
thread_local bool t_counting = false;
thread_local uint64_t t_allocations = 0;
}  // namespace

// Every form of the global allocation functions is replaced, so whatever allocates (the library's
// temporary buffers use the nothrow forms) is counted, and every pair matches malloc / free.
namespace {
void* counted_alloc(size_t n, size_t align) noexcept {
  if (t_counting) ++t_allocations;
  if (align <= alignof(std::max_align_t)) return std::malloc(n ? n : 1);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}
void* counted_or_throw(size_t n, size_t align) {
  if (void* p = counted_alloc(n, align)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(size_t n) { return counted_or_throw(n, 0); }
void* operator new[](size_t n) { return counted_or_throw(n, 0); }
void* operator new(size_t n, std::align_val_t a) { return counted_or_throw(n, static_cast<size_t>(a)); }
void* operator new[](size_t n, std::align_val_t a) { return counted_or_throw(n, static_cast<size_t>(a)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n, 0); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n, 0); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_alloc(n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_alloc(n, static_cast<size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace mavswitch::test {

AllocationCounter::AllocationCounter() {
  t_allocations = 0;
  t_counting = true;
}
AllocationCounter::~AllocationCounter() { t_counting = false; }
uint64_t AllocationCounter::count() const { return t_allocations; }

}  // namespace mavswitch::test
