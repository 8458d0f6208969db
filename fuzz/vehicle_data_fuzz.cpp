// A peer's frames into the vehicle data (vehicle/): the tree, the parameters, the commands and
// the JSON encoders; then every read path asked, and the services' requests (missions, files,
// logs) as a client makes them. The input is a few frames (any message of the built-in dialect,
// any source, any payload bytes) and the text of a request. Nothing a peer or a client sends may
// throw out of these paths, crash, or hang: a running router on its own thread takes the frames
// as from a link, and an answer that comes at once must be an HTTP status.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dialect/builtin.hpp"
#include "fuzz_world.hpp"
#include "library/component.hpp"
#include "protocol/encoder.hpp"
#include "vehicle/vehicle_data.hpp"

using namespace mavswitch;

namespace {

using fuzz::Input;

// One router for the whole run (its thread and the vehicle data on its own component); the
// members go before the router stops.
struct World : fuzz::RunningRouter {
  World() {
    own = std::make_unique<Component>(router, 255, 191);
    peer = std::make_unique<Component>(router, 1, 1);
    data = std::make_unique<vehicle::VehicleData>(router, *own, dialect::builtin::model());
  }
  std::unique_ptr<Component> own, peer;
  std::unique_ptr<vehicle::VehicleData> data;
};

// An answer that comes, or the run fails: a hang is a bug too.
template <class F>
void await(F ask) {
  auto promise = std::make_shared<std::promise<void>>();
  auto answered = promise->get_future();
  ask([promise](const vehicle::VehicleData::Answer& a) {
    if (a.status < 200 || a.status > 599) std::abort();
    promise->set_value();
  });
  // Parameters and commands wait for the vehicle, which answers nothing here: their answers
  // come when they give up. Only a wrong request answers at once; the rest is left to run.
  (void)answered.wait_for(std::chrono::milliseconds(0));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World world;
  Input in(data, size);
  const auto infos = dialect::builtin::message_table().all();
  // Up to eight frames: a message of the dialect chosen by the input, from any source.
  const int frames = in.byte() % 9;
  for (int i = 0; i < frames; ++i) {
    const protocol::MessageInfo& info = infos[(in.byte() | in.byte() << 8) % infos.size()];
    protocol::FrameHeader h;
    h.sysid = in.byte() % 4;
    h.compid = in.byte() % 4;
    h.msgid = info.id;
    std::vector<uint8_t> payload(info.max_len);
    for (auto& b : payload) b = in.byte();
    uint8_t frame[protocol::kMaxFrameLen];
    const size_t n = protocol::encode_v2(h, payload, info.crc_extra, frame);
    world.peer->send_raw({frame, n});
  }
  world.router.run_on_loop([] {});  // the frames above are routed before the reads below
  vehicle::VehicleData& v = *world.data;
  const std::string pointer = in.text(64);
  const std::string body = in.text(256);
  const std::string name = in.text(20);
  const uint8_t system = in.byte() % 4, component = in.byte() % 4;
  // The tree as the window reads it: its slots copied on the router's thread, rendered here.
  const auto tree = [&](const std::string& at) {
    std::vector<NewestFrames::Slot> slots;
    world.router.run_on_loop([&] { slots = v.newest(); });
    (void)v.tree(at, SIZE_MAX, slots);
  };
  const char* const methods[] = {"GET", "PUT", "DELETE", "POST"};
  const std::string method = methods[in.byte() % 4];
  const uint8_t choice = in.byte();
  const std::optional<uint8_t> which = choice & 1 ? std::optional<uint8_t>(choice >> 1) : std::nullopt;
  switch (in.byte() % 11) {
    case 0: tree(""); break;
    case 1: tree("/" + pointer); break;
    case 2: (void)v.send(body); break;
    case 3: await([&](auto answer) { v.command(system, component, body, answer); }); break;
    case 4: await([&](auto answer) { v.parameter(system, component, name, body, answer); }); break;
    case 5: await([&](auto answer) { v.parameters(system, component, answer); }); break;
    // The services' requests as a client makes them: a .plan or WPL body, a path, a Range header.
    case 6: await([&](auto answer) { v.mission(system, component, method, which, choice & 2, body, answer); }); break;
    case 7: await([&](auto answer) { v.file(system, component, method, pointer, choice & 2, body, answer); }); break;
    case 8: await([&](auto answer) { v.log(system, component, method, which, name, answer); }); break;
    case 9: await([&](auto answer) { v.mission_current(system, component, body, answer); }); break;
    case 10: await([&](auto answer) { v.load_parameters(system, component, body, answer); }); break;
  }
  std::string error;
  (void)v.matching(pointer, &error);
  return 0;
}
