#include "daemon/fabric_subjects.hpp"

#include <fmt/format.h>

#include <iterator>

#include "protocol/frame.hpp"

namespace mavswitch::daemon {

void fabric_subject(std::string& out, std::string_view prefix, std::span<const uint8_t> frame,
                    const protocol::MessageTable& table) {
  const bool v2 = frame[0] == protocol::kMagicV2;
  const size_t header = v2 ? protocol::kHeaderLenV2 : protocol::kHeaderLenV1;
  const uint8_t sys = frame[v2 ? 5 : 3], comp = frame[v2 ? 6 : 4], payload_len = frame[1];
  const uint32_t msgid = v2 ? uint32_t(frame[7]) | uint32_t(frame[8]) << 8 | uint32_t(frame[9]) << 16 : frame[5];
  const protocol::MessageInfo* info = table.find(msgid);
  // A byte past a truncated v2 payload is zero, as the sender meant it.
  auto payload = [&](int offset) -> uint8_t {
    return offset >= 0 && offset < payload_len ? frame[header + static_cast<size_t>(offset)] : 0;
  };
  const uint8_t target = info != nullptr ? payload(info->target_system_offset) : 0;
  out.clear();
  auto it = std::back_inserter(out);
  if (target != 0)
    it = fmt::format_to(it, "{}.to.{}.{}.", prefix, target, payload(info->target_component_offset));
  else
    it = fmt::format_to(it, "{}.from.{}.{}.", prefix, sys, comp);
  if (info != nullptr)
    out.append(info->name);
  else
    fmt::format_to(it, "{}", msgid);
}

std::string interest_subject(std::string_view prefix, uint8_t system) {
  return fmt::format("{}.to.{}.>", prefix, system);
}

}  // namespace mavswitch::daemon
