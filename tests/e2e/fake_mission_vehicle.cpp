#include "e2e/fake_mission_vehicle.hpp"

#include "mavswitch/msg/mission_ack.hpp"
#include "mavswitch/msg/mission_clear_all.hpp"
#include "mavswitch/msg/mission_count.hpp"
#include "mavswitch/msg/mission_item_int.hpp"
#include "mavswitch/msg/mission_request_int.hpp"
#include "mavswitch/msg/mission_request_list.hpp"

namespace mavswitch::test {
namespace {

constexpr uint8_t kAccepted = 0, kInvalidSequence = 13;  // MAV_MISSION_RESULT

}  // namespace

FakeMissionVehicle::FakeMissionVehicle(Router& router, uint8_t system, uint8_t component, double loss, uint32_t seed)
    : router_(router), component_(router, system, component), loss_(loss), random_(seed) {
  router_.run_on_loop([this] {
    ask_again_ = router_.event_loop().every(kAskAgainMs, [this] {
      for (uint8_t type = 0; type < 3; ++type)
        if (uploads_[type].open && router_.event_loop().now() - uploads_[type].asked_at >= kAskAgainMs) request(type);
    });
  });
  component_.start_heartbeat(2, 3, std::chrono::milliseconds(200));  // a quadrotor, ArduPilot: the routes know it
  const MessageFilter to_me{.addressed_to_me = true};
  auto heard = [this](const protocol::FrameView& f) {
    gcs_system_ = f.sysid(), gcs_component_ = f.compid();
    return !lost() || (++dropped_, false);
  };
  subscriptions_.push_back(component_.subscribe<msg::MissionRequestList>(
      [this, heard](const msg::MissionRequestList& m, const protocol::FrameView& f) {
        if (!heard(f) || m.mission_type > 2) return;
        msg::MissionCount c;
        c.target_system = gcs_system_, c.target_component = gcs_component_;
        c.count = static_cast<uint16_t>(lists_[m.mission_type].size());
        c.mission_type = m.mission_type;
        send(c);
      },
      to_me));
  subscriptions_.push_back(component_.subscribe<msg::MissionRequestInt>(
      [this, heard](const msg::MissionRequestInt& m, const protocol::FrameView& f) {
        if (!heard(f) || m.mission_type > 2 || m.seq >= lists_[m.mission_type].size()) return;
        const services::MissionItem& i = lists_[m.mission_type][m.seq];
        msg::MissionItemInt out;
        out.target_system = gcs_system_, out.target_component = gcs_component_;
        out.seq = m.seq, out.frame = i.frame, out.command = i.command, out.current = i.current,
        out.autocontinue = i.autocontinue;
        out.param1 = i.params[0], out.param2 = i.params[1], out.param3 = i.params[2], out.param4 = i.params[3];
        out.x = i.x, out.y = i.y, out.z = i.z, out.mission_type = m.mission_type;
        send(out);
      },
      to_me));
  subscriptions_.push_back(component_.subscribe<msg::MissionCount>(
      [this, heard](const msg::MissionCount& m, const protocol::FrameView& f) {
        if (!heard(f) || m.mission_type > 2) return;
        uploads_[m.mission_type] = {true, m.count, {}};
        if (m.count == 0) {
          lists_[m.mission_type].clear();
          uploads_[m.mission_type].open = false;
          return ack(m.mission_type, kAccepted);
        }
        request(m.mission_type);
      },
      to_me));
  subscriptions_.push_back(component_.subscribe<msg::MissionItemInt>(
      [this, heard](const msg::MissionItemInt& m, const protocol::FrameView& f) {
        if (!heard(f) || m.mission_type > 2) return;
        Upload& u = uploads_[m.mission_type];
        if (!u.open) return ack(m.mission_type, kAccepted);         // a late copy: the ACK was lost
        if (lost_item_ == m.seq) return;                            // asked again when its time comes
        if (m.seq != u.got.size()) return request(m.mission_type);  // not the one it wants: again
        u.got.push_back({m.command,
                         m.frame,
                         m.current != 0,
                         m.autocontinue != 0,
                         {m.param1, m.param2, m.param3, m.param4},
                         m.x,
                         m.y,
                         m.z});
        if (u.got.size() < u.count) return request(m.mission_type);
        lists_[m.mission_type] = std::move(u.got);
        u = {};
        ack(m.mission_type, kAccepted);
      },
      to_me));
  subscriptions_.push_back(component_.subscribe<msg::MissionClearAll>(
      [this, heard](const msg::MissionClearAll& m, const protocol::FrameView& f) {
        if (!heard(f)) return;
        if (m.mission_type > 2) return ack(m.mission_type, kInvalidSequence);
        lists_[m.mission_type].clear();
        ack(m.mission_type, kAccepted);
      },
      to_me));
}

FakeMissionVehicle::~FakeMissionVehicle() {
  router_.run_on_loop([this] { router_.event_loop().cancel(ask_again_); });
}

void FakeMissionVehicle::request(uint8_t type) {
  uploads_[type].asked_at = router_.event_loop().now();
  msg::MissionRequestInt r;
  r.target_system = gcs_system_, r.target_component = gcs_component_;
  r.seq = static_cast<uint16_t>(uploads_[type].got.size());
  r.mission_type = type;
  send(r);
}

void FakeMissionVehicle::ack(uint8_t type, uint8_t result) {
  msg::MissionAck a;
  a.target_system = gcs_system_, a.target_component = gcs_component_;
  a.type = result;
  a.mission_type = type;
  send(a);
}

}  // namespace mavswitch::test
