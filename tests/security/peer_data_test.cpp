// A peer's bytes are data (docs/SECURITY.md): names that are not text are escaped, never thrown
// on; answers count only from the link their source lives on.
#include <future>

#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/param_request_list.hpp"
#include "mavswitch/msg/param_request_read.hpp"
#include "mavswitch/msg/param_value.hpp"
#include "mavswitch/msg/statustext.hpp"
#include "security/daemon_fixture.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

namespace {

// A metric's value in /metrics, or -1.
double metric(uint16_t port, const std::string& series) {
  const std::string text = http_request(port, "GET", "/metrics").body;
  const auto at = text.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
}

// The first frame of `msgid` a peer got, if any.
std::optional<protocol::FrameView> first(Peer& peer, uint32_t msgid) {
  for (const auto& f : peer.received().frames)
    if (view_of(f).msgid() == msgid) return view_of(f);
  return std::nullopt;
}

// GET /v1/vehicles/1/1/parameters under way (its answer to come), once the vehicle was asked
// for its list; no future when it was not asked within 5 s.
std::future<HttpReply> fetch_parameters(uint16_t http_port, Peer& vehicle) {
  auto answer = std::async(std::launch::async, [http_port] {
    return http_request(http_port, "GET", "/v1/vehicles/1/1/parameters", "", "", 15);
  });
  if (!wait_until([&] { return first(vehicle, msg::ParamRequestList::kId).has_value(); }, 5000ms)) return {};
  return answer;
}

// The vehicle (1/1) says its parameter `index` of `count`: FIRST (1), SECOND (2) or THIRD (3).
void send_parameter(UdpPeer& vehicle, uint16_t port, uint16_t index, uint16_t count) {
  msg::ParamValue v;
  const std::string name = index == 0 ? "FIRST" : index == 1 ? "SECOND" : "THIRD";
  std::memcpy(v.param_id.data(), name.data(), name.size());
  v.param_value = float(index + 1);
  v.param_type = 9;  // REAL32
  v.param_count = count;
  v.param_index = index;
  vehicle.send_to(port, frame_of(v, 1, 1));
}

// Whether the vehicle was asked for its parameter `index` by PARAM_REQUEST_READ.
bool asked_for_index(Peer& vehicle, int16_t index) {
  for (const auto& f : vehicle.received().frames)
    if (view_of(f).msgid() == msg::ParamRequestRead::kId &&
        msg::ParamRequestRead::decode(view_of(f).payload()).param_index == index)
      return true;
  return false;
}

}  // namespace

// A component answers PARAM_REQUEST_LIST with a name holding 0xFF and control bytes. The
// parameters, the tree and the log show it escaped; the router stays up (it aborted before).
TEST_F(DaemonUnderAttack, a_parameter_name_with_invalid_utf8_is_escaped) {
  auto d = start();
  connect_peers();
  auto answer = fetch_parameters(http_port_, vehicle_);
  ASSERT_TRUE(answer.valid()) << "the vehicle was asked for its parameters";
  msg::ParamValue v;
  const char name[] = "\xff\x1b[2J\xfe\x01NAME";
  std::memcpy(v.param_id.data(), name, sizeof name - 1);
  v.param_value = 3;
  v.param_type = 9;
  v.param_count = 1;
  v.param_index = 0;
  vehicle_.send_to(vehicle_port_, frame_of(v, 1, 1));
  msg::Statustext text;
  std::memcpy(text.text.data(), name, sizeof name - 1);
  vehicle_.send_to(vehicle_port_, frame_of(text, 1, 1));
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  const HttpReply reply = answer.get();
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_NE(reply.body.find("\xef\xbf\xbd"), std::string::npos) << "U+FFFD where the byte was: " << reply.body;
  EXPECT_EQ(reply.body.find('\xff'), std::string::npos);
  EXPECT_TRUE(wait_until([&] {
    return http_request(http_port_, "GET", "/v1/mavlink/vehicles/1/components/1/messages/STATUSTEXT").status == 200;
  }));
  EXPECT_EQ(http_request(http_port_, "GET", "/v1/mavlink").status, 200);
  EXPECT_EQ(http_request(http_port_, "GET", "/v1/vehicles/1/1/parameters").status, 200) << "and again";
  EXPECT_TRUE(d->running());
  EXPECT_EQ(d->err().find('\x1b'), std::string::npos) << "no control byte reaches the log";
}

// A component says the first of its two parameters again and again (every 100 ms) and never
// the second: a value known already is no progress, so the fetch still asks for the missing
// one after a quiet second (before, each repeat put that off for good) and completes with it.
TEST_F(DaemonUnderAttack, a_parameter_said_again_and_again_does_not_hold_a_fetch_open) {
  auto d = start();
  connect_peers();
  auto answer = fetch_parameters(http_port_, vehicle_);
  ASSERT_TRUE(answer.valid()) << "the vehicle was asked for its parameters";
  auto value = [&](uint16_t index) { send_parameter(vehicle_, vehicle_port_, index, 2); };
  auto asked_for_second = [&] { return asked_for_index(vehicle_, 1); };
  bool asked = false;
  for (int i = 0; i < 40 && !asked; ++i) {  // 4 s at most
    value(0);
    asked = wait_until(asked_for_second, 100ms);
  }
  ASSERT_TRUE(asked) << "the missing parameter was asked for while the first kept coming";
  value(1);
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  const HttpReply reply = answer.get();
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_NE(reply.body.find("\"SECOND\""), std::string::npos) << reply.body;
  EXPECT_NE(reply.body.find("\"complete\":true"), std::string::npos) << reply.body;
}

// A component says its first parameter again and again, each time with another count (2, then
// 3, then 2...), and never the second: a changed count is no progress either (before, each
// flip held the fetch open for good), so the missing one is asked for. A changed count is a new
// list, so the fetch completes once both come with one count.
TEST_F(DaemonUnderAttack, a_component_flipping_its_count_does_not_hold_a_fetch_open) {
  auto d = start();
  connect_peers();
  auto answer = fetch_parameters(http_port_, vehicle_);
  ASSERT_TRUE(answer.valid()) << "the vehicle was asked for its parameters";
  auto value = [&](uint16_t index, uint16_t count) { send_parameter(vehicle_, vehicle_port_, index, count); };
  auto asked_for_second = [&] { return asked_for_index(vehicle_, 1); };
  bool asked = false;
  for (int i = 0; i < 40 && !asked; ++i) {  // 4 s at most
    value(0, uint16_t(2 + i % 2));
    asked = wait_until(asked_for_second, 100ms);
  }
  ASSERT_TRUE(asked) << "the missing parameter was asked for while the count kept changing";
  value(0, 2);
  value(1, 2);
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  const HttpReply reply = answer.get();
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_NE(reply.body.find("\"SECOND\""), std::string::npos) << reply.body;
  EXPECT_NE(reply.body.find("\"complete\":true"), std::string::npos) << reply.body;
}

// A component's list is fetched whole (2 of 2), then it says a value with another count (3):
// its list changed and indices may have moved, so the next GET asks for the list again instead
// of serving the old one (before, it served a list of 3 with one missing, said complete).
TEST_F(DaemonUnderAttack, a_component_whose_count_changed_is_fetched_again) {
  auto d = start();
  connect_peers();
  auto answer = fetch_parameters(http_port_, vehicle_);
  ASSERT_TRUE(answer.valid()) << "the vehicle was asked for its parameters";
  send_parameter(vehicle_, vehicle_port_, 0, 2);
  send_parameter(vehicle_, vehicle_port_, 1, 2);
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  HttpReply reply = answer.get();
  ASSERT_NE(reply.body.find("\"complete\":true"), std::string::npos) << reply.body;
  const auto lists_asked = [&] {
    size_t n = 0;
    for (const auto& f : vehicle_.received().frames) n += view_of(f).msgid() == msg::ParamRequestList::kId;
    return n;
  };
  ASSERT_EQ(lists_asked(), 1u);
  EXPECT_EQ(http_request(http_port_, "GET", "/v1/vehicles/1/1/parameters").status, 200) << "served from the cache";
  EXPECT_EQ(lists_asked(), 1u);

  send_parameter(vehicle_, vehicle_port_, 2, 3);  // a new list: three
  // Taken once the tree has it: the tree and the parameters see a frame in one dispatch.
  ASSERT_TRUE(wait_until([&] {
    return http_request(http_port_, "GET", "/v1/mavlink/vehicles/1/components/1/messages/PARAM_VALUE")
               .body.find("\"param_count\": 3") != std::string::npos;
  }));
  auto again = std::async(std::launch::async, [this] {
    return http_request(http_port_, "GET", "/v1/vehicles/1/1/parameters", "", "", 15);
  });
  ASSERT_TRUE(wait_until([&] { return lists_asked() == 2; }, 5000ms)) << "the changed list was asked for again";
  for (uint16_t i = 0; i < 3; ++i) send_parameter(vehicle_, vehicle_port_, i, 3);
  ASSERT_EQ(again.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  reply = again.get();
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_NE(reply.body.find("\"count\":3"), std::string::npos) << reply.body;
  EXPECT_NE(reply.body.find("\"THIRD\""), std::string::npos) << reply.body;
  EXPECT_NE(reply.body.find("\"complete\":true"), std::string::npos) << reply.body;
}

// A ground station sends COMMAND_ACK in the vehicle's name (1/1) for a command the API sent. It
// is counted as spoofed and not believed: the answer is the vehicle's own, from its link.
TEST_F(DaemonUnderAttack, a_spoofed_command_ack_is_not_believed) {
  auto d = start();
  connect_peers();
  auto answer = std::async(std::launch::async, [&] {
    return http_request(http_port_, "POST", "/v1/vehicles/1/1/command",
                        R"({"command":"MAV_CMD_COMPONENT_ARM_DISARM","params":[1]})", "", 15);
  });
  std::optional<protocol::FrameView> command;
  ASSERT_TRUE(wait_until([&] { return (command = first(vehicle_, msg::CommandLong::kId)).has_value(); }, 5000ms));
  msg::CommandAck ack;
  ack.command = 400;
  ack.target_system = command->sysid();  // the router's own component, which asked
  ack.target_component = command->compid();
  ack.result = 0;  // ACCEPTED, says the impostor
  gcs_.send_to(gcs_port_, frame_of(ack, 1, 1));
  ASSERT_TRUE(wait_until([&] { return metric(http_port_, "mavswitch_spoofed_answers_total") >= 1; })) << d->err();
  ack.result = 4;  // FAILED, says the vehicle
  vehicle_.send_to(vehicle_port_, frame_of(ack, 1, 1));
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  const HttpReply reply = answer.get();
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_NE(reply.body.find("MAV_RESULT_FAILED"), std::string::npos) << reply.body;
  EXPECT_NE(d->err().find("not believed"), std::string::npos) << d->err();
}

// A component that answers "in progress" every half second, for ever, does not hold a command
// open: the answer comes 10 s after the first IN_PROGRESS (504: no final answer).
TEST_F(DaemonUnderAttack, a_command_kept_in_progress_is_answered_within_10_s) {
  auto d = start();
  connect_peers();
  const auto asked = std::chrono::steady_clock::now();
  auto answer = std::async(std::launch::async, [&] {
    return http_request(http_port_, "POST", "/v1/vehicles/1/1/command", R"({"command":31000})", "", 30);
  });
  std::optional<protocol::FrameView> command;
  ASSERT_TRUE(wait_until([&] { return (command = first(vehicle_, msg::CommandLong::kId)).has_value(); }, 5000ms));
  msg::CommandAck ack;
  ack.command = 31000;
  ack.target_system = command->sysid();
  ack.target_component = command->compid();
  ack.result = 5;  // MAV_RESULT_IN_PROGRESS
  for (int i = 0; i < 60 && answer.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready; ++i) {
    ack.progress = static_cast<uint8_t>(i);
    vehicle_.send_to(vehicle_port_, frame_of(ack, 1, 1));
    answer.wait_for(std::chrono::milliseconds(500));  // the component's pace, and the answer's deadline
  }
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(1)), std::future_status::ready);
  const HttpReply reply = answer.get();
  const auto took = std::chrono::steady_clock::now() - asked;
  EXPECT_EQ(reply.status, 504) << reply.body;
  EXPECT_NE(reply.body.find("final"), std::string::npos) << reply.body;
  EXPECT_LT(took, std::chrono::seconds(12));
  EXPECT_GE(took, std::chrono::seconds(9));
}
