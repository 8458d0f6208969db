#include "base/fault.hpp"

#include <atomic>

#include "base/log.hpp"

namespace mavswitch::fault {
namespace {

std::atomic<uint64_t> caught_total{0};
log::Throttle lines;

}  // namespace

void caught(std::string_view where) noexcept {
  // relaxed: a count for statistics; nothing else is published through it.
  caught_total.fetch_add(1, std::memory_order_relaxed);
  try {
    throw;  // the exception being handled, to name it
  } catch (const std::exception& e) {
    try {
      lines.line(log::Level::kError, "{}: failed and was cut short: {}", where, e.what());
    } catch (...) {  // no memory for the line: the count stands
    }
  } catch (...) {
    try {
      lines.line(log::Level::kError, "{}: failed and was cut short (not a std::exception)", where);
    } catch (...) {
    }
  }
}

// relaxed: a count for statistics; nothing else is published through it.
uint64_t count() noexcept { return caught_total.load(std::memory_order_relaxed); }

}  // namespace mavswitch::fault
