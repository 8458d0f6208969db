// Renders decoded fields (a FieldSink) as text "name=value ..." or as a JSON object body.
#pragma once

#include <fmt/format.h>

#include "dialect/field_sink.hpp"

namespace mavswitch::tools {

class FieldFormatter final : public dialect::FieldSink {
 public:
  enum class Style { kText, kJson };
  FieldFormatter(fmt::memory_buffer& out, Style style) : out_(out), style_(style) {}

  void field(std::string_view name, dialect::FieldType type, bool is_array, uint16_t count,
             const void* values) override;

 private:
  void value(dialect::FieldType type, const void* at);
  fmt::memory_buffer& out_;
  Style style_;
  bool first_ = true;
};

// Appends s as a quoted, escaped string (JSON rules, which also read well as text).
void append_quoted(fmt::memory_buffer& out, std::string_view s);

}  // namespace mavswitch::tools
