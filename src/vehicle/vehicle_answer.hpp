// What the vehicle requests share (vehicle_data.cpp, vehicle_missions.cpp): an error's answer,
// a request's one answer, and the fault boundary around work on the router's thread.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/fault.hpp"
#include "base/json_text.hpp"
#include "vehicle/vehicle_data.hpp"

namespace mavswitch::vehicle {

inline VehicleData::Answer error_answer(int status, const std::string& why) {
  return {status, json_text(nlohmann::json{{"error", why}})};
}

// A request's one answer, shared by the work on the router's thread and the boundary that catches
// what that work throws: whichever comes first answers, the other finds it answered. Work the
// router's loop drops unrun as it stops (EventLoop::post) lets go of it unanswered: then it
// answers 503 itself, rather than leave the client waiting for its timeout.
class OnceAnswer {
 public:
  explicit OnceAnswer(std::function<void(VehicleData::Answer)> answer) : answer_(std::move(answer)) {}
  OnceAnswer(const OnceAnswer&) = delete;
  OnceAnswer& operator=(const OnceAnswer&) = delete;
  ~OnceAnswer() {
    if (answer_) answer_(error_answer(503, "the router is stopping"));
  }
  void operator()(VehicleData::Answer a) {
    if (!answer_) return;
    auto answer = std::move(answer_);
    answer_ = nullptr;
    answer(std::move(a));
  }

 private:
  std::function<void(VehicleData::Answer)> answer_;
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
