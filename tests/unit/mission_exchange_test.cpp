// The mission and log exchanges driven by hand (support/exchange_fixture.hpp), each message as a
// vehicle sends it, copies and strays included; and what VehicleData refuses before it starts one.
#include <atomic>
#include <memory>
#include <string>

#include "base/byte_stream.hpp"
#include "dialect/builtin.hpp"
#include "mavswitch/msg/log_data.hpp"
#include "mavswitch/msg/log_entry.hpp"
#include "mavswitch/msg/log_request_data.hpp"
#include "mavswitch/msg/log_request_end.hpp"
#include "mavswitch/msg/log_request_list.hpp"
#include "mavswitch/msg/mission_ack.hpp"
#include "mavswitch/msg/mission_count.hpp"
#include "mavswitch/msg/mission_item.hpp"
#include "mavswitch/msg/mission_item_int.hpp"
#include "mavswitch/msg/mission_request_int.hpp"
#include "mavswitch/msg/mission_request_list.hpp"
#include "services/log_exchange.hpp"
#include "services/mission_exchange.hpp"
#include "support/exchange_fixture.hpp"
#include "vehicle/vehicle_data.hpp"

using namespace mavswitch;
using services::LogExchange;
using services::MissionExchange;
using Step = Exchange::Step;

namespace {

using MissionExchangeTest = test::ExchangeTest;
using LogExchangeTest = test::ExchangeTest;
using VehicleMissionsTest = test::ExchangeTest;

constexpr uint8_t kGlobalRelativeAlt = 3;  // MAV_FRAME_GLOBAL_RELATIVE_ALT
constexpr uint8_t kFence = 1;              // MAV_MISSION_TYPE_FENCE

TEST_F(MissionExchangeTest, a_read_takes_each_item_once_in_order_and_acknowledges) {
  on_router([&] {
    MissionExchange e(MissionExchange::Mode::kRead, kVehicle, kVehicle, kFence);
    e.start(*own_);
    EXPECT_EQ(asked<msg::MissionRequestList>().mission_type, kFence);
    EXPECT_EQ(say(e, msg::MissionCount{.count = 2}), Step::kIgnored) << "another list's count";
    EXPECT_EQ(say(e, msg::MissionCount{.count = 2, .mission_type = kFence}), Step::kProgress);
    EXPECT_EQ(asked<msg::MissionRequestInt>().seq, 0);
    msg::MissionItemInt first{.seq = 0,
                              .frame = kGlobalRelativeAlt,
                              .command = 5001,
                              .x = 473977420,
                              .y = 85455940,
                              .z = 10,
                              .mission_type = kFence};
    first.param1 = 4;
    EXPECT_EQ(say(e, first), Step::kProgress);
    EXPECT_EQ(asked<msg::MissionRequestInt>().seq, 1);
    EXPECT_EQ(say(e, first), Step::kIgnored) << "a copy of an item it has";
    EXPECT_EQ(e.progress(), (std::pair<uint64_t, uint64_t>{1, 2}));
    // An old vehicle's MISSION_ITEM: degrees as floats, kept as MISSION_ITEM_INT's integers.
    msg::MissionItem second{.seq = 1,
                            .frame = kGlobalRelativeAlt,
                            .command = 5001,
                            .x = 47.5f,
                            .y = -8.25f,
                            .z = 20,
                            .mission_type = kFence};
    EXPECT_EQ(say(e, second), Step::kDone);
    EXPECT_EQ(asked<msg::MissionAck>().type, MissionExchange::kAccepted);
    EXPECT_EQ(asked<msg::MissionAck>().mission_type, kFence);
    ASSERT_EQ(e.items().size(), 2u);
    EXPECT_EQ(e.items()[0].x, 473977420);
    EXPECT_EQ(e.items()[0].params[0], 4);
    EXPECT_EQ(e.items()[1].x, 475000000);
    EXPECT_EQ(e.items()[1].y, -82500000);
    EXPECT_EQ(e.result(), MissionExchange::kAccepted);
  });
}

TEST_F(MissionExchangeTest, a_write_answers_each_request_and_ends_with_the_vehicles_ack) {
  on_router([&] {
    std::vector<services::MissionItem> items(2);
    items[0].command = 16, items[1].command = 21;
    MissionExchange e(MissionExchange::Mode::kWrite, kVehicle, kVehicle, 0, items);
    e.start(*own_);
    EXPECT_EQ(asked<msg::MissionCount>().count, 2);
    EXPECT_EQ(say(e, msg::MissionAck{}), Step::kIgnored) << "an ACCEPTED before any item was asked for";
    EXPECT_EQ(say(e, msg::MissionRequestInt{.seq = 0}), Step::kProgress);
    EXPECT_EQ(asked<msg::MissionItemInt>().command, 16);
    const int sent = requests<msg::MissionItemInt>();
    EXPECT_EQ(say(e, msg::MissionRequestInt{.seq = 0}), Step::kIgnored) << "asked again: answered, not progress";
    EXPECT_EQ(requests<msg::MissionItemInt>(), sent + 1);
    EXPECT_EQ(say(e, msg::MissionRequestInt{.seq = 2}), Step::kIgnored) << "past the list";
    EXPECT_EQ(requests<msg::MissionItemInt>(), sent + 1);
    EXPECT_EQ(say(e, msg::MissionRequestInt{.seq = 1}), Step::kProgress);
    EXPECT_EQ(asked<msg::MissionItemInt>().command, 21);
    EXPECT_EQ(say(e, msg::MissionAck{.type = MissionExchange::kAccepted}), Step::kDone);
    EXPECT_EQ(e.result(), MissionExchange::kAccepted);
  });
}

TEST_F(LogExchangeTest, a_list_ends_when_every_entry_came) {
  on_router([&] {
    const std::unique_ptr<LogExchange> e = LogExchange::list(kVehicle, kVehicle);
    e->start(*own_);
    EXPECT_EQ(asked<msg::LogRequestList>().end, 0xFFFF);
    const msg::LogEntry one{.id = 1, .num_logs = 2, .last_log_num = 2, .time_utc = 1700000000, .size = 4096};
    EXPECT_EQ(say(*e, one), Step::kProgress);
    EXPECT_EQ(say(*e, one), Step::kIgnored) << "an entry said again";
    EXPECT_EQ(say(*e, msg::LogEntry{.id = 2, .num_logs = 2, .last_log_num = 2, .size = 10}), Step::kDone);
    ASSERT_EQ(e->entries().size(), 2u);
    EXPECT_EQ(e->entries().at(1).size, 4096u);
    EXPECT_EQ(e->entries().at(1).time_utc, 1700000000u);
  });
}

TEST_F(LogExchangeTest, a_read_asks_for_a_window_and_ends_at_the_size_listed) {
  auto stream = std::make_shared<ByteStream>(4096);
  on_router([&] {
    const std::unique_ptr<LogExchange> e = LogExchange::read(kVehicle, kVehicle, 3, 0, 200, stream);
    e->start(*own_);
    EXPECT_EQ(asked<msg::LogRequestData>().id, 3);
    EXPECT_EQ(asked<msg::LogRequestData>().count, 200u);
    auto data = [](uint32_t ofs, uint8_t count) {
      msg::LogData d{.id = 3, .ofs = ofs, .count = count};
      for (size_t i = 0; i < d.data.size(); ++i) d.data[i] = static_cast<uint8_t>(ofs + i);
      return d;
    };
    EXPECT_EQ(say(*e, msg::LogData{.id = 4, .ofs = 0, .count = 90}), Step::kIgnored) << "another log's";
    EXPECT_EQ(say(*e, data(90, 90)), Step::kProgress);
    EXPECT_EQ(stream->available(), 0u) << "nothing after a gap goes to the reader";
    EXPECT_EQ(say(*e, data(0, 90)), Step::kProgress);
    EXPECT_EQ(say(*e, data(180, 20)), Step::kDone);
    EXPECT_TRUE(e->complete());
    EXPECT_EQ(requests<msg::LogRequestEnd>(), 1);
  });
  std::string got(300, '\0');
  bool last = false;
  got.resize(stream->take(reinterpret_cast<uint8_t*>(got.data()), got.size(), &last));
  ASSERT_EQ(got.size(), 200u);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(static_cast<uint8_t>(got[i]), static_cast<uint8_t>(i)) << i;
}

// Found by vehicle_data_fuzz: the window names only the three lists, but VehicleData took any
// number and read past its list of names.
TEST_F(VehicleMissionsTest, a_list_type_that_is_none_is_refused) {
  vehicle::VehicleData data(router_, *own_, dialect::builtin::model());
  auto status = std::make_shared<std::atomic<int>>(0);  // an answer that comes later finds it still there
  data.mission(kVehicle, kVehicle, "GET", uint8_t{38}, false, "",
               [status](vehicle::VehicleData::Answer a) { *status = a.status; });
  EXPECT_EQ(*status, 400) << "answered at once";
}

}  // namespace
