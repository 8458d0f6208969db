// Reads of a parameter by name, on a router with no links (support/exchange_fixture.hpp).
#include <chrono>
#include <future>
#include <memory>
#include <optional>

#include "mavswitch/msg/param_request_read.hpp"
#include "support/exchange_fixture.hpp"
#include "vehicle/vehicle_parameters.hpp"

using namespace mavswitch;
using vehicle::VehicleParameters;

namespace {

using VehicleParametersTest = test::ExchangeTest;

// Found by http_api_fuzz: a second read of a name took over the first's timer, so the first's
// went unrecorded; destroyed meanwhile, the parameters were still called by it a second later.
// Each read now has its own timer, and the destructor cancels them all.
TEST_F(VehicleParametersTest, two_reads_of_one_name_each_send_and_leave_no_timer_behind) {
  auto parameters = std::make_unique<VehicleParameters>(router_, *own_);
  int answers = 0;
  on_router([&] {
    for (int i = 0; i < 2; ++i)
      parameters->access(kVehicle, kVehicle, "RTL_ALT", std::nullopt, std::nullopt,
                         [&](std::optional<VehicleParameters::Parameter>) { ++answers; });
  });
  EXPECT_EQ(requests<msg::ParamRequestRead>(), 2) << "each read asks once at its start";
  // Past the first retry: a timer left behind would run then, on what is gone (AddressSanitizer
  // says so) or sending a third request. The loop runs its timers in the order they are due, so
  // one set now for after the retry runs after any such timer.
  parameters.reset();
  std::promise<void> past;
  on_router([&] { router_.event_loop().after(VehicleParameters::kRetryMs + 200, [&] { past.set_value(); }); });
  ASSERT_EQ(past.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(requests<msg::ParamRequestRead>(), 2);
  EXPECT_EQ(answers, 0) << "a destroyed VehicleParameters answers nothing";
}

}  // namespace
