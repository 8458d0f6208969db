// What the vehicle requests share (vehicle_data.cpp, vehicle_missions.cpp): an error's answer,
// a request's one answer, and the fault boundary around work on the router's thread.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/fault.hpp"
#include "base/json_text.hpp"
#include "base/once.hpp"
#include "vehicle/vehicle_data.hpp"

namespace mavswitch::vehicle {

inline VehicleData::Answer error_answer(int status, const std::string& why) {
  return {status, json_text(nlohmann::json{{"error", why}})};
}

// A vehicle request's one answer (base/once.hpp): 503 when the router's loop drops its work unrun
// as it stops (EventLoop::post).
class OnceAnswer : public Once<VehicleData::Answer> {
 public:
  explicit OnceAnswer(std::function<void(VehicleData::Answer)> answer)
      : Once(std::move(answer), error_answer(503, "the router is stopping")) {}
};

// `work` with the fault boundary around it: what it throws is counted and logged (fault.hpp) and
// the client is answered 500 rather than left waiting.
template <class F>
auto guarded(std::shared_ptr<OnceAnswer> once, F work) {
  return [once = std::move(once), work = std::move(work)](auto&&... args) mutable {
    try {
      work(std::forward<decltype(args)>(args)...);
    } catch (...) {
      fault::caught("a vehicle request");
      (*once)(error_answer(500, "the request failed inside the router (counted as a fault; see its log)"));
    }
  };
}

}  // namespace mavswitch::vehicle
