// VehicleData's missions: GET, PUT and DELETE /v1/vehicles/SYS/COMP/mission through the
// transaction engine's MissionExchange, one list after another (mission, fence, rally), and
// .../mission/current.
#include <fmt/format.h>

#include <map>

#include "library/command_exchange.hpp"
#include "mavswitch/msg/mission_current.hpp"
#include "services/mission_plan.hpp"
#include "vehicle/vehicle_answer.hpp"

namespace mavswitch::vehicle {
namespace {

using services::MissionExchange;
using services::MissionItem;
using Ordered = nlohmann::ordered_json;
constexpr const char* kTypeNames[] = {"mission", "fence", "rally"};
constexpr uint16_t kSetMissionCurrent = 224;  // MAV_CMD_DO_SET_MISSION_CURRENT

}  // namespace

struct VehicleData::MissionJob {
  uint8_t system = 0, component = 0;
  MissionExchange::Mode mode = MissionExchange::Mode::kRead;
  bool wpl = false;
  bool every_type = false;  // a read of all three: a fence or rally list the vehicle has not is left empty
  services::PlanVehicle vehicle;
  std::vector<uint8_t> types;                         // still to do, in order
  std::map<uint8_t, std::vector<MissionItem>> lists;  // what to write, or what was read
  Ordered results = Ordered::object();
  int status = 200;
  std::shared_ptr<OnceAnswer> answer;
};

void VehicleData::mission(uint8_t system, uint8_t component, std::string method, std::optional<uint8_t> type, bool wpl,
                          std::string body, std::function<void(Answer)> answer) {
  auto job = std::make_shared<MissionJob>();
  job->system = system, job->component = component, job->wpl = wpl;
  job->answer = std::make_shared<OnceAnswer>(std::move(answer));
  if (type && *type >= std::size(kTypeNames))  // the window names only these; another caller may not
    return (*job->answer)(error_answer(400, "type: 0 (mission), 1 (fence) or 2 (rally)"));
  router_.event_loop().post(guarded(job->answer, [this, job, method = std::move(method), type, body = std::move(body)] {
    // What the vehicle is, from its last HEARTBEAT: an ArduPilot's item 0 is home.
    for (const NewestFrames::Slot& s : newest_->copy(0, router_.event_loop().now()))
      if (s.system == job->system && s.component == job->component) job->vehicle = {s.payload[5], s.payload[4]};
    if (method == "GET") {
      job->mode = MissionExchange::Mode::kRead;
      job->every_type = !type && !job->wpl;
      job->types = type       ? std::vector<uint8_t>{*type}
                   : job->wpl ? std::vector<uint8_t>{0}
                              : std::vector<uint8_t>{0, 1, 2};
    } else if (method == "DELETE") {
      job->mode = MissionExchange::Mode::kClear;
      job->types = {type.value_or(0)};
    } else {
      job->mode = MissionExchange::Mode::kWrite;
      std::string error;
      if (job->wpl) {
        auto items = services::parse_wpl(body, &error);
        if (!items) return (*job->answer)(error_answer(400, "QGC WPL 110: " + error));
        job->types = {type.value_or(0)};
        job->lists[job->types[0]] = std::move(*items);
      } else {
        auto plan = services::parse_plan(body, job->vehicle, &error);
        if (!plan) return (*job->answer)(error_answer(400, ".plan: " + error));
        const std::optional<std::vector<MissionItem>>* lists[] = {&plan->mission, &plan->fence, &plan->rally};
        for (uint8_t t = 0; t < 3; ++t) {
          if (!*lists[t] || (type && *type != t)) continue;
          job->types.push_back(t);
          job->lists[t] = **lists[t];
        }
        if (job->types.empty())
          return (*job->answer)(
              error_answer(400, type ? fmt::format(".plan: no {} in it", kTypeNames[*type])
                                     : std::string(".plan: no mission, geoFence or rallyPoints in it")));
      }
    }
    next_list(job);
  }));
}

void VehicleData::next_list(std::shared_ptr<MissionJob> job) {
  using End = Transactions::End;
  if (job->types.empty() || job->status != 200) {
    if (job->status != 200) return (*job->answer)({job->status, json_text(job->results, 2)});
    if (job->mode != MissionExchange::Mode::kRead)
      return (*job->answer)({200, json_text(Ordered{{"accepted", true}, {"lists", job->results}}, 2)});
    if (job->wpl) {
      Answer a{200, services::wpl_text(job->lists[0])};
      a.content_type = "text/plain; charset=utf-8";
      return (*job->answer)(std::move(a));
    }
    services::Plan plan;
    plan.mission = job->lists[0], plan.fence = job->lists[1], plan.rally = job->lists[2];
    return (*job->answer)({200, services::plan_json(plan, job->vehicle)});
  }
  const uint8_t type = job->types.front();
  job->types.erase(job->types.begin());
  auto exchange = std::make_unique<MissionExchange>(
      job->mode, job->system, job->component, type,
      job->mode == MissionExchange::Mode::kWrite ? job->lists[type] : std::vector<MissionItem>{});
  transactions_.run<MissionExchange>(
      this, job->system, job->component, "mission", std::move(exchange),
      guarded(job->answer, [this, job, type](End end, const MissionExchange& e) {
        const char* what = kTypeNames[type];
        const char* doing = job->mode == MissionExchange::Mode::kRead    ? "read"
                            : job->mode == MissionExchange::Mode::kWrite ? "write"
                                                                         : "clear";
        if (end != End::kDone) {
          const int status = end == End::kBusy ? 409 : end == End::kFull ? 503 : 504;
          const std::string why =
              end == End::kBusy ? fmt::format("a mission transfer with {}/{} is under way", job->system, job->component)
              : end == End::kFull ? std::string("too many transactions with the vehicles under way; try again shortly")
              : end == End::kGone
                  ? fmt::format("the route to {}/{} went during the {} {}", job->system, job->component, what, doing)
                  : fmt::format("no answer from {}/{} to the {} {} ({} tries, {} ms apart)", job->system,
                                job->component, what, doing, MissionExchange::kTries, MissionExchange::kRetryMs);
          return (*job->answer)(error_answer(status, why));
        }
        const uint8_t result = e.result().value_or(MissionExchange::kAccepted);
        const std::string name = json_.name_of("MAV_MISSION_RESULT", result);
        if (job->mode == MissionExchange::Mode::kRead) {
          if (result == MissionExchange::kAccepted) {
            job->lists[type] = e.items();
          } else if (!(job->every_type && type != 0)) {  // a vehicle without fences or rally points: empty
            return (*job->answer)(error_answer(
                422, fmt::format("{}/{} refused the {} read: {}", job->system, job->component, what, name)));
          }
        } else {
          job->results[what] = {{"result", name}, {"items", e.items().size()}};
          if (result != MissionExchange::kAccepted) {
            job->status = 422;
            job->results = {{"accepted", false}, {"lists", job->results}};
          }
        }
        next_list(job);
      }));
}

void VehicleData::mission_current(uint8_t system, uint8_t component, std::string_view body,
                                  std::function<void(Answer)> answer) {
  auto once = std::make_shared<OnceAnswer>(std::move(answer));
  std::optional<uint16_t> seq;
  if (!body.empty()) {
    const auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("seq") || !j["seq"].is_number_unsigned() ||
        j["seq"].get<uint64_t>() > 0xFFFF)
      return (*once)(error_answer(400, "the body is {\"seq\": N}: the item to fly next"));
    seq = j["seq"].get<uint16_t>();
  }
  router_.event_loop().post(guarded(once, [this, system, component, seq, once] {
    if (!seq) {  // what MISSION_CURRENT said last
      for (const NewestFrames::Slot& s : newest_->copy(msg::MissionCurrent::kId, router_.event_loop().now())) {
        if (s.system != system || s.component != component) continue;
        const auto m = msg::MissionCurrent::decode({s.payload.data(), s.payload_len});
        return (*once)({200, json_text(Ordered{{"seq", m.seq},
                                               {"total", m.total},
                                               {"mission_state", json_.name_of("MISSION_STATE", m.mission_state)}})});
      }
      return (*once)(error_answer(404, fmt::format("no MISSION_CURRENT from {}/{} yet", system, component)));
    }
    CommandExchange::Command c{system, component, kSetMissionCurrent, {float(*seq), 0, 0, 0, 0, 0, 0}};
    using End = Transactions::End;
    transactions_.run<CommandExchange>(
        this, system, component, CommandExchange::kind(c.command), std::make_unique<CommandExchange>(c),
        guarded(once, [this, once, seq](End end, const CommandExchange& e) {
          if (end == End::kBusy) return (*once)(error_answer(409, "a change of the current item is under way"));
          if (!e.outcome().acknowledged) return (*once)(error_answer(504, "no COMMAND_ACK for DO_SET_MISSION_CURRENT"));
          const std::string result = json_.name_of("MAV_RESULT", e.outcome().result);
          (*once)({e.outcome().result == 0 ? 200 : 422, json_text(Ordered{{"seq", *seq}, {"result", result}})});
        }));
  }));
}

}  // namespace mavswitch::vehicle
