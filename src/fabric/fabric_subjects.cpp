#include "fabric/fabric_subjects.hpp"

#include <fmt/format.h>

#include <iterator>

namespace mavswitch::fabric {

void fabric_subject(std::string& out, std::string_view prefix, const protocol::FrameView& frame) {
  const protocol::MessageInfo* info = frame.info();
  const uint8_t target = info != nullptr ? frame.payload_byte(info->target_system_offset) : 0;
  out.clear();
  auto it = std::back_inserter(out);
  if (target != 0)
    it = fmt::format_to(it, "{}.to.{}.{}.", prefix, target, frame.payload_byte(info->target_component_offset));
  else
    it = fmt::format_to(it, "{}.from.{}.{}.", prefix, frame.sysid(), frame.compid());
  if (info != nullptr)
    out.append(info->name);
  else
    fmt::format_to(it, "{}", frame.msgid());
}

std::string interest_subject(std::string_view prefix, uint8_t system) {
  return fmt::format("{}.to.{}.>", prefix, system);
}

namespace {

// The token before the next '.', taken off the front of `subject`.
std::string_view next_token(std::string_view& subject) {
  const size_t dot = subject.find('.');
  const std::string_view token = subject.substr(0, dot);
  subject = dot == std::string_view::npos ? std::string_view{} : subject.substr(dot + 1);
  return token;
}

}  // namespace

bool subjects_intersect(std::string_view a, std::string_view b) {
  while (!a.empty() && !b.empty()) {
    const std::string_view x = next_token(a), y = next_token(b);
    if (x == ">" || y == ">") return true;  // each still had a token here for ">" to take
    if (x != y && x != "*" && y != "*") return false;
  }
  return a.empty() && b.empty();
}

}  // namespace mavswitch::fabric
