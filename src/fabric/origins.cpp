#include "fabric/origins.hpp"

#include <charconv>
#include <optional>
#include <utility>

namespace mavswitch::fabric {

namespace {

// (began, id) from an origin PREFIX.origin.BEGAN-ID; nothing when it is not one of ours.
std::optional<std::pair<uint64_t, uint64_t>> origin_order(std::string_view origin) {
  const size_t at = origin.rfind(".origin.");
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view tail = origin.substr(at + 8);
  const size_t dash = tail.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  uint64_t began = 0, id = 0;
  const auto a = std::from_chars(tail.data(), tail.data() + dash, began, 16);
  const auto b = std::from_chars(tail.data() + dash + 1, tail.data() + tail.size(), id, 16);
  if (a.ec != std::errc() || a.ptr != tail.data() + dash || b.ec != std::errc() || b.ptr != tail.data() + tail.size())
    return std::nullopt;
  return std::make_pair(began, id);
}

}  // namespace

OriginParts origin_parts(std::string_view reply) {
  const size_t at = reply.rfind(".origin.");
  if (at == std::string_view::npos) return {reply, 0};
  const size_t dot = reply.find('.', at + 8);
  if (dot == std::string_view::npos) return {reply, 0};
  uint64_t count = 0;
  const auto r = std::from_chars(reply.data() + dot + 1, reply.data() + reply.size(), count);
  if (r.ec != std::errc() || r.ptr != reply.data() + reply.size()) return {reply, 0};
  return {reply.substr(0, dot), count};
}

bool began_before(std::string_view a, std::string_view b) {
  const auto x = origin_order(a), y = origin_order(b);
  return x && y && *x < *y;
}

}  // namespace mavswitch::fabric
