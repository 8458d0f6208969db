// The common shape of a decoded message: a sequence of named fields, in XML order. The
// generated typed messages and the run-time decoder both produce it, so one printer (and one
// equality check in the tests) serves both.
#pragma once

#include <cstdint>
#include <string_view>

#include "dialect/field_type.hpp"

namespace mavswitch::dialect {

class FieldSink {
 public:
  virtual ~FieldSink() = default;
  // `values` points at `count` native values of `type` (count is 1 for a scalar); `is_array`
  // tells a one-element array from a scalar. Valid only during the call.
  virtual void field(std::string_view name, FieldType type, bool is_array, uint16_t count, const void* values) = 0;
};

}  // namespace mavswitch::dialect
