#include "vehicle/vehicle_data.hpp"

#include <fmt/format.h>
#include <malloc.h>

#include <re2/re2.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/fault.hpp"
#include "base/json_text.hpp"
#include "library/command_exchange.hpp"
#include "vehicle/vehicle_answer.hpp"

namespace mavswitch::vehicle {

VehicleData::VehicleData(Router& router, Component& component, const dialect::Dialect& dialect)
    : router_(router),
      component_(component),
      json_(dialect),
      transactions_(component.transactions()),
      parameters_(router, component) {
  router_.run_on_loop([&] { newest_ = &component.newest_frames(); });
}

VehicleData::~VehicleData() {
  router_.run_on_loop([&] {
    subscription_.reset();
    transactions_.cancel(this);  // the component, and its engine, outlive this
    if (batch_ != 0) router_.event_loop().cancel(batch_);
  });
}

void VehicleData::frame(const protocol::FrameView& f) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "VehicleData::frame");
  const auto now = WallClock::now();
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
    if (batch_ == 0) {
      batch_ = router_.event_loop().after(kBatchMs, [this] {
        batch_ = 0;
        for (const auto& waiting : feeds_) waiting->wake();
      });
    }
  }
  if (!closed) return;
  std::erase_if(feeds_, [](const auto& feed) { return feed->closed(); });
  if (feeds_.empty()) subscription_.reset();  // the last client went: frames stop coming here
}

std::vector<NewestFrames::Slot> VehicleData::newest(uint32_t msgid) const {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "VehicleData::newest");
  return msgid != 0 ? newest_->copy(msgid, transport::now_ms()) : newest_->copy(transport::now_ms());
}

std::optional<VehicleData::Answer> VehicleData::tree_rendered(std::string_view pointer, size_t room) const {
  if (!pointer.empty() && pointer != "/") return std::nullopt;
  std::lock_guard lock(rendered_.mutex);
  if (!rendered_.text) return std::nullopt;
  if (std::chrono::steady_clock::now() - rendered_.at < std::chrono::milliseconds(kTreeRenderMs))
    return Answer{200, "", rendered_.text};
  if (rendered_.text->size() > room)
    return Answer{503, json_text(nlohmann::json{{"error",
                                                 "answers not yet read by their clients fill the window's "
                                                 "memory; try again shortly"}})};
  return std::nullopt;
}

VehicleData::Answer VehicleData::tree(std::string_view pointer, size_t room,
                                      const std::vector<NewestFrames::Slot>& slots) const {
  const auto render = [&] { return render_tree(slots, json_, WallTimes::now()); };
  if (pointer.empty() || pointer == "/") {
    std::lock_guard lock(rendered_.mutex);  // one render for the readers of the whole who come together
    const auto now = std::chrono::steady_clock::now();
    if (!rendered_.text || now - rendered_.at >= std::chrono::milliseconds(kTreeRenderMs)) {
      if (rendered_.text && rendered_.text->size() > room)
        return {503, json_text(nlohmann::json{{"error",
                                               "answers not yet read by their clients fill the window's "
                                               "memory; try again shortly"}})};
      std::string text = render();
      text += '\n';
      text.shrink_to_fit();  // held while slow readers take it: its size, not its growth's capacity
      rendered_.text = std::make_shared<const std::string>(std::move(text));
      rendered_.at = now;
      malloc_trim(0);  // the render's scratch (slots, the string's growth) goes back to the system
    }
    return {200, "", rendered_.text};
  }
  const auto parsed = nlohmann::ordered_json::parse(render());  // fields stay in wire order
  try {
    const nlohmann::ordered_json::json_pointer at{std::string(pointer)};
    if (parsed.contains(at)) return {200, json_text(parsed.at(at), 2)};
  } catch (const nlohmann::json::exception&) {  // not a pointer at all ("vehicles" without its '/')
  }
  return {404, json_text(nlohmann::json{{"error", fmt::format("nothing at {} (yet)", pointer)}})};
}

VehicleData::Answer VehicleData::send(std::string_view body) const {
  const auto error = [](int status, const std::string& why) {
    return Answer{status, json_text(nlohmann::json{{"error", why}})};
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
  // RE2: no backtracking, so no pattern a reader sends can hold the window's thread.
  RE2::Options options;
  options.set_log_errors(false);
  const RE2 re(pattern, options);
  if (!re.ok()) {
    *error = fmt::format("filter {}: not a regular expression ({})", pattern, re.error());
    return std::nullopt;
  }
  std::unordered_set<uint32_t> ids;
  for (const dialect::MessageDef& m : json_.dialect().messages)
    if (RE2::PartialMatch(m.name, re)) ids.insert(m.id);
  return ids;
}

std::shared_ptr<JsonFeed> VehicleData::open(JsonFeed::Filter filter, std::function<void()> wake) {
  auto feed = std::make_shared<JsonFeed>(std::move(filter), std::move(wake));
  // Posted, not waited for: the client hears what is routed once the router's thread took it.
  router_.event_loop().post([this, feed] {
    feeds_.push_back(feed);
    if (!subscription_.active())
      subscription_ = component_.subscribe(MessageFilter{}, [this](const protocol::FrameView& f) { frame(f); });
  });
  return feed;
}

namespace {

std::string parameter_json(const MessageJson& json, const VehicleParameters::Parameter& p) {
  nlohmann::ordered_json j{{"name", p.name}};
  if (p.type >= 1 && p.type <= 8)
    j["value"] = static_cast<int64_t>(p.value);
  else
    j["value"] = static_cast<float>(p.value);  // written as the float it is, not its double
  j["type"] = json.name_of("MAV_PARAM_TYPE", p.type);
  j["index"] = p.index;
  return json_text(j);
}

bool in_float_range(double v) { return std::isfinite(v) && std::fabs(v) <= std::numeric_limits<float>::max(); }

}  // namespace

void VehicleData::command(uint8_t system, uint8_t component, std::string_view body,
                          std::function<void(Answer)> answer) {
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return answer(error_answer(400, "the body is a JSON object {\"command\": ...}"));
  CommandExchange::Command c{system, component, 0, {}};
  const auto command = j.find("command");
  std::optional<uint64_t> id;
  if (command != j.end() && command->is_string()) id = json_.value_of("MAV_CMD", command->get<std::string>());
  if (command != j.end() && command->is_object() && command->contains("type") && (*command)["type"].is_string())
    id = json_.value_of("MAV_CMD", (*command)["type"].get<std::string>());
  if (command != j.end() && command->is_number_unsigned()) id = command->get<uint64_t>();
  if (!id || *id > 0xFFFF)
    return answer(error_answer(400, "\"command\": a MAV_CMD by name or number" +
                                        (command != j.end() ? " (not " + json_text(*command) + ")" : std::string())));
  c.command = static_cast<uint16_t>(*id);
  for (const auto& [key, value] : j.items()) {
    if (key == "command") continue;
    if (key == "params") {
      if (!value.is_array() || value.size() > 7) return answer(error_answer(400, "\"params\": up to seven numbers"));
      for (size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_number() && !value[i].is_null())
          return answer(error_answer(400, "\"params\": up to seven numbers"));
        if (value[i].is_number() && !in_float_range(value[i].get<double>()))
          return answer(error_answer(400, "\"params\": each within float range"));
        c.params[i] = value[i].is_null() ? NAN : value[i].get<float>();
      }
      continue;
    }
    if (key.size() == 6 && key.starts_with("param") && key[5] >= '1' && key[5] <= '7' && value.is_number()) {
      if (!in_float_range(value.get<double>())) return answer(error_answer(400, "\"" + key + "\": within float range"));
      c.params[size_t(key[5] - '1')] = value.get<float>();
      continue;
    }
    return answer(error_answer(400, "no \"" + key + "\" in a command (command, params, param1..param7)"));
  }
  auto once = std::make_shared<OnceAnswer>(std::move(answer));
  router_.event_loop().post(guarded(once, [this, c, once] {
    using End = Transactions::End;
    transactions_.run<CommandExchange>(
        this, c.system, c.component, CommandExchange::kind(c.command), std::make_unique<CommandExchange>(c),
        guarded(once, [this, c, answer = once](End end, const CommandExchange& e) {
          const std::string name = json_.name_of("MAV_CMD", c.command);
          const CommandExchange::Outcome& o = e.outcome();
          if (end == End::kBusy || end == End::kFull)
            return (*answer)(error_answer(
                end == End::kBusy ? 409 : 503,
                end == End::kBusy
                    ? fmt::format("{} to {}/{} is under way", name, c.system, c.component)
                    : std::string("too many transactions with the vehicles under way; try again shortly")));
          if (!o.acknowledged)
            return (*answer)(
                error_answer(504, fmt::format("no {}COMMAND_ACK from {}/{} for {} after {} attempts",
                                              o.result == 5 ? "final " : "", c.system, c.component, name, o.attempts)));
          (*answer)({200, json_text(nlohmann::ordered_json{{"command", name},
                                                           {"result", json_.name_of("MAV_RESULT", o.result)},
                                                           {"result_param2", o.result_param2},
                                                           {"progress", o.progress},
                                                           {"attempts", o.attempts}})});
        }));
  }));
}

void VehicleData::parameters(uint8_t system, uint8_t component, std::function<void(Answer)> answer) {
  auto once = std::make_shared<OnceAnswer>(std::move(answer));
  router_.event_loop().post(guarded(once, [this, system, component, once] {
    parameters_.fetch(
        system, component, guarded(once, [this, system, component, answer = once](const auto& table) {
          if (!table.answered)
            return (*answer)(error_answer(504, fmt::format("no PARAM_VALUE from {}/{}", system, component)));
          std::string out =
              fmt::format(R"({{"system":{},"component":{},"count":{},"parameters":{{)", system, component, table.count);
          std::vector<uint16_t> missing;
          bool first = true;
          for (const auto& p : table.parameters) {
            if (!p.known) {
              missing.push_back(uint16_t(&p - table.parameters.data()));
              continue;
            }
            out += first ? "" : ",";
            out += json_text(nlohmann::json(p.name)) + ":" + parameter_json(json_, p);
            first = false;
          }
          out += "},\"complete\":" + std::string(missing.empty() ? "true" : "false");
          out += ",\"missing\":" + json_text(nlohmann::json(missing)) + "}";
          (*answer)({200, std::move(out)});
        }));
  }));
}

void VehicleData::parameter(uint8_t system, uint8_t component, std::string name, std::string_view body,
                            std::function<void(Answer)> answer) {
  std::optional<double> value;
  std::optional<uint8_t> type;
  if (body.find_first_not_of(" \t\r\n") != std::string_view::npos) {
    const auto j = nlohmann::json::parse(body, nullptr, false);
    const nlohmann::json* v = &j;
    if (j.is_object()) {
      if (!j.contains("value")) return answer(error_answer(400, "give the parameter's \"value\""));
      v = &j["value"];
      if (j.contains("type")) {
        const auto t = j["type"].is_string() ? json_.value_of("MAV_PARAM_TYPE", j["type"].get<std::string>())
                                             : std::optional<uint64_t>();
        if (!t || *t < 1 || *t > 10) return answer(error_answer(400, "\"type\": a MAV_PARAM_TYPE by name"));
        type = static_cast<uint8_t>(*t);
      }
    }
    if (!v->is_number()) return answer(error_answer(400, "the value is a number ({\"value\": 3} or 3)"));
    if (!in_float_range(v->get<double>()))
      return answer(error_answer(400, "the value is beyond what MAVLink's float parameter can carry"));
    value = v->get<double>();
  }
  if (name.empty() || name.size() > 16) return answer(error_answer(400, "a parameter's name is 1 to 16 characters"));
  auto once = std::make_shared<OnceAnswer>(std::move(answer));
  router_.event_loop().post(guarded(once, [=, this] {
    parameters_.access(system, component, name, value, type,
                       guarded(once, [this, system, component, name, answer = once](const auto& p) {
                         if (!p)
                           return (*answer)(error_answer(
                               504, fmt::format("no PARAM_VALUE of {} from {}/{}", name, system, component)));
                         (*answer)({200, parameter_json(json_, *p)});
                       }));
  }));
}

}  // namespace mavswitch::vehicle
