// MAVLink's mission protocol as an Exchange: a mission, fence or rally list read from a component
// (MISSION_REQUEST_LIST, MISSION_COUNT, MISSION_REQUEST_INT for each item, MISSION_ITEM_INT or
// MISSION_ITEM back, our MISSION_ACK), written to it (our MISSION_COUNT, its MISSION_REQUEST_INT
// or MISSION_REQUEST for each item in any order and as often as it likes, its MISSION_ACK), or
// cleared (MISSION_CLEAR_ALL, MISSION_ACK). Silence sends the last request (or item) again:
// after 1,500 ms, five times (the spec's), or after 250 ms while items flow. Run it as kind "mission": one
// transfer of any type per component at a time, as the protocol allows.
#pragma once

#include <array>
#include <optional>

#include "library/transactions.hpp"

namespace mavswitch::services {

// One item, as MISSION_ITEM_INT carries it: x and y are degrees * 1e7 in a global frame, metres
// * 1e4 in a local one, param5 and param6 as they are otherwise.
struct MissionItem {
  uint16_t command = 0;  // MAV_CMD
  uint8_t frame = 0;     // MAV_FRAME
  bool current = false;
  bool autocontinue = true;
  std::array<float, 4> params{};
  int32_t x = 0, y = 0;
  float z = 0;
  bool operator==(const MissionItem&) const = default;
};

// Whether a frame's x and y are degrees * 1e7 (global), metres * 1e4 (local), or neither.
enum class FrameScale { kGlobal, kLocal, kNone };
FrameScale frame_scale(uint8_t frame) noexcept;

class MissionExchange final : public Exchange {
 public:
  enum class Mode { kRead, kWrite, kClear };
  static constexpr routing::Millis kRetryMs = 1500;
  static constexpr routing::Millis kItemRetryMs = 250;
  static constexpr int kTries = 5;
  static constexpr uint8_t kAccepted = 0;          // MAV_MISSION_ACCEPTED
  static constexpr uint8_t kInvalidSequence = 13;  // MAV_MISSION_INVALID_SEQUENCE

  // A read or a clear of `type` (MAV_MISSION_TYPE); a write of `items`.
  MissionExchange(Mode mode, uint8_t system, uint8_t component, uint8_t type, std::vector<MissionItem> items = {})
      : mode_(mode), system_(system), component_(component), type_(type), items_(std::move(items)) {}

  // The items read (or written), and the component's MAV_MISSION_RESULT: nothing when no
  // MISSION_ACK came (a read that completes answers with ours, accepted).
  const std::vector<MissionItem>& items() const noexcept { return items_; }
  std::optional<uint8_t> result() const noexcept { return result_; }
  uint8_t type() const noexcept { return type_; }

  std::vector<Listen> listens() const override;
  void start(Component& from) override;
  Step heard(const protocol::FrameView& frame, Component& from) override;
  bool silent(Component& from) override;
  // The spec's 1,500 ms until the component first answers; then, while items flow (it answers
  // each at once), kItemRetryMs, with as many more tries as keep the spec's patience: a lost
  // item costs a quarter second, not one and a half (QGroundControl reads this way).
  routing::Millis retry_ms() const override { return flowing() ? kItemRetryMs : kRetryMs; }
  int tries() const override { return flowing() ? kTries * (kRetryMs / kItemRetryMs) : kTries; }
  std::pair<uint64_t, uint64_t> progress() const override { return {done_, count_}; }

 private:
  Step read(const protocol::FrameView& frame, Component& from);
  Step write(const protocol::FrameView& frame, Component& from);
  void ask(Component& from);  // a read's current request
  void send_item(Component& from, uint16_t seq);
  void acknowledge(Component& from, uint8_t result);
  bool flowing() const noexcept { return mode_ == Mode::kRead ? counted_ : last_asked_.has_value(); }

  Mode mode_;
  uint8_t system_, component_, type_;
  std::vector<MissionItem> items_;
  std::optional<uint8_t> result_;
  bool counted_ = false;  // a read: its MISSION_COUNT came
  uint64_t count_ = 0, done_ = 0;
  std::optional<uint16_t> last_asked_;  // a write: the item the component last asked for
  bool resent_ = false;                 // a write: the item asked for sent again after a silence
  bool resent_last_ = false;            // ... and it was the last item
  int restarts_ = 0;                    // a write begun again (its ACCEPTED may have been lost)
  static constexpr int kRestarts = 2;
};

}  // namespace mavswitch::services
