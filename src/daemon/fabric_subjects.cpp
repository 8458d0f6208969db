#include "daemon/fabric_subjects.hpp"

#include <fmt/format.h>

#include <iterator>

namespace mavswitch::daemon {

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

}  // namespace mavswitch::daemon
