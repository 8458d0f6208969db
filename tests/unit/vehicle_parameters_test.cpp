// Reads of a parameter by name, on a router with no links (support/exchange_fixture.hpp).
#include <chrono>
#include <memory>
#include <optional>
#include <thread>

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
  routing::Millis start = 0;
  on_router([&] {
    start = router_.event_loop().now();
    for (int i = 0; i < 2; ++i)
      parameters->access(kVehicle, kVehicle, "RTL_ALT", std::nullopt, std::nullopt,
                         [&](std::optional<VehicleParameters::Parameter>) { ++answers; });
  });
  EXPECT_EQ(requests<msg::ParamRequestRead>(), 2) << "each read asks once at its start";
  parameters.reset();
  // Past the first retry: a timer left behind would run now, on what is gone (AddressSanitizer
  // says so) or sending a third request.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool past = false;
  while (!past && std::chrono::steady_clock::now() < deadline) {
    on_router([&] { past = router_.event_loop().now() >= start + VehicleParameters::kRetryMs + 200; });
    if (!past)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the router's clock, not a wait for a result
  }
  ASSERT_TRUE(past);
  on_router([] {});  // the timers due by then have run
  EXPECT_EQ(requests<msg::ParamRequestRead>(), 2);
  EXPECT_EQ(answers, 0) << "a destroyed VehicleParameters answers nothing";
}

}  // namespace
