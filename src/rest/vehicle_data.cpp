#include "rest/vehicle_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

namespace mavswitch::rest {

VehicleData::VehicleData(Router& router, Component& component, const dialect::Dialect& dialect)
    : router_(router), component_(component), json_(dialect) {
  subscription_ = component.subscribe(MessageFilter{}, [this](const protocol::FrameView& f) { frame(f); });
}

void VehicleData::frame(const protocol::FrameView& f) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "VehicleData::frame");
  const auto now = WallClock::now();
  tree_.add(f, now);
  if (feeds_.empty()) return;
  Text text;  // made at most once, for the first client that wants it
  bool closed = false;
  for (const auto& feed : feeds_) {
    if (feed->closed()) {
      closed = true;
      continue;
    }
    if (!feed->wants(f, now)) continue;
    if (!text) {
      text_.clear();
      if (!json_.write_frame(f, text_)) return;  // not in the dialect: nobody can read it
      text = std::make_shared<const std::string>(text_);
    }
    feed->push(text);
  }
  if (closed) std::erase_if(feeds_, [](const auto& feed) { return feed->closed(); });
}

VehicleData::Answer VehicleData::tree(std::string_view pointer) const {
  std::vector<MessageTree::Slot> slots;
  router_.run_on_loop([&] { slots = tree_.copy(); });
  const std::string whole = MessageTree::render(slots, json_, WallClock::now());
  if (pointer.empty() || pointer == "/") return {200, whole};
  const auto parsed = nlohmann::ordered_json::parse(whole);  // fields stay in wire order
  try {
    const nlohmann::ordered_json::json_pointer at{std::string(pointer)};
    if (parsed.contains(at)) return {200, parsed.at(at).dump(2)};
  } catch (const nlohmann::json::exception&) {  // not a pointer at all ("vehicles" without its '/')
  }
  return {404, nlohmann::json{{"error", fmt::format("nothing at {} (yet)", pointer)}}.dump()};
}

VehicleData::Answer VehicleData::send(std::string_view body) const {
  const auto error = [](int status, const std::string& why) {
    return Answer{status, nlohmann::json{{"error", why}}.dump()};
  };
  const auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_discarded()) return error(400, "the body is not JSON");
  uint8_t frame[protocol::kMaxFrameLen];
  std::string why;
  const size_t n = json_.encode(parsed, frame, &why);
  if (n == 0) return error(400, why);
  if (!component_.send_raw({frame, n})) return error(503, "the router's queue from the API is full: try again");
  return {200, R"({"result":"sent"})"};
}

std::optional<std::unordered_set<uint32_t>> VehicleData::matching(const std::string& pattern,
                                                                  std::string* error) const {
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    *error = fmt::format("filter {}: not a regular expression ({})", pattern, e.what());
    return std::nullopt;
  }
  std::unordered_set<uint32_t> ids;
  for (const dialect::MessageDef& m : json_.dialect().messages)
    if (std::regex_search(m.name, re)) ids.insert(m.id);
  return ids;
}

std::shared_ptr<JsonFeed> VehicleData::open(JsonFeed::Filter filter, std::function<void()> wake) {
  auto feed = std::make_shared<JsonFeed>(std::move(filter), std::move(wake));
  router_.run_on_loop([&] { feeds_.push_back(feed); });
  return feed;
}

}  // namespace mavswitch::rest
