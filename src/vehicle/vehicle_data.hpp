// What the window serves of the vehicles' own data, on the router's own component: the tree is
// the component's newest frames (library/newest_frames.hpp, decoded only when asked); while WebSocket
// clients are open, every frame goes to those that want it (decoded once, its JSON shared); messages posted as JSON
// are encoded and sent from the component's link, so routing, filters and signing apply.
// Frames arrive on the router's thread; the other calls come from the window's.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_stream.hpp"
#include "library/component.hpp"
#include "library/transactions.hpp"
#include "vehicle/json_feed.hpp"
#include "vehicle/message_json.hpp"
#include "vehicle/message_tree.hpp"
#include "vehicle/vehicle_parameters.hpp"

namespace mavswitch::vehicle {

class VehicleData {
 public:
  // Texts for the WebSocket clients go to the window's thread together, at most this long after
  // the first of them: a wake-up of that thread costs more than writing a text, and a person or a
  // script reading JSON does not see 10 ms.
  static constexpr routing::Millis kBatchMs = 10;

  // Listens on `component` (the router's own), which must outlive this, as `dialect` must.
  VehicleData(Router& router, Component& component, const dialect::Dialect& dialect);
  ~VehicleData();

  const MessageJson& json() const noexcept { return json_; }

  struct Answer {
    Answer(int s = 200, std::string b = {}, std::shared_ptr<const std::string> whole = nullptr)
        : status(s), body(std::move(b)), shared(std::move(whole)) {}
    int status = 200;
    std::string body;
    std::shared_ptr<const std::string> shared;  // instead of body: the whole tree, shared by its readers
    std::string content_type = "application/json";
    // Instead of body: bytes that come as the vehicle sends them (a file), `length` of them when
    // known (-1: not known; the connection closes at the end).
    std::shared_ptr<ByteStream> stream;
    int64_t length = -1;
    std::string content_range;  // a part of the whole (206): "bytes FIRST-LAST/SIZE"
  };
  // The whole tree, rendered at most this often: readers within it share one text (and the
  // window holds it once however slowly they read).
  static constexpr routing::Millis kTreeRenderMs = 100;
  // The tree is read in two steps, so that no thread waits for another: its slots copied on the
  // router's thread (`newest()`), then rendered on the reader's (`tree`). The tree, or its node at
  // a JSON pointer ("/vehicles/1/components/1/messages/ATTITUDE/message/roll"); 404 naming the
  // path when there is none. `room`: the bytes the caller can still hold for answers; a new
  // render of the whole that would not fit (as large as the last) is not made: 503.
  Answer tree(std::string_view pointer, size_t room, const std::vector<NewestFrames::Slot>& slots) const;
  // The whole tree's render when one made within kTreeRenderMs stands (or the 503 `tree` would
  // give): no slots need copying for it. Nothing otherwise. The reader's thread.
  std::optional<Answer> tree_rendered(std::string_view pointer, size_t room) const;
  // The router's thread: the newest frame of every message (0) or of message `msgid` from each
  // system and component.
  std::vector<NewestFrames::Slot> newest(uint32_t msgid = 0) const;
  // Any thread: a {"header":...,"message":...} text (POST /v1/mavlink, a WebSocket client's
  // message) encoded and sent; 400 naming what is wrong, 503 when the router's queue is full.
  Answer send(std::string_view body) const;
  // Not the router's thread: a new WebSocket client (its messages already chosen by `filter`'s
  // regex over the dialect's names); it goes when closed.
  std::shared_ptr<JsonFeed> open(JsonFeed::Filter filter, std::function<void()> wake);
  // The ids of the dialect's messages whose names `pattern` matches anywhere (as mavlink2rest's
  // filter); nothing, with *error, for a pattern that is not a regular expression.
  std::optional<std::unordered_set<uint32_t>> matching(const std::string& pattern, std::string* error) const;

  // Not the router's thread; each answer comes once, from the router's thread (or at once for
  // a request that is wrong). A command by name or number with up to seven params
  // ({"command": "MAV_CMD_COMPONENT_ARM_DISARM", "params": [1]}): its COMMAND_ACK's result by
  // name, 504 without one, 409 while the same command to the same component is under way.
  void command(uint8_t system, uint8_t component, std::string_view body, std::function<void(Answer)> answer);
  // Every parameter of a component: 504 when it answers nothing.
  void parameters(uint8_t system, uint8_t component, std::function<void(Answer)> answer);
  // One parameter by name, read (an empty body) or set ({"value": 3} or 3, and "type" by name for
  // a component whose list was not fetched): the component's PARAM_VALUE, or 504.
  void parameter(uint8_t system, uint8_t component, std::string name, std::string_view body,
                 std::function<void(Answer)> answer);

  // Not the router's thread (vehicle_missions.cpp). A component's mission, fence and rally lists
  // (`type`: one of them; none: all three) read ("GET": a .plan, or QGC WPL 110 text when
  // `wpl`), written ("PUT": a .plan, or WPL text when `wpl`: what the component accepted, its
  // MISSION_ACK by name, each list), or cleared ("DELETE": the mission, or `type`).
  void mission(uint8_t system, uint8_t component, std::string method, std::optional<uint8_t> type, bool wpl,
               std::string body, std::function<void(Answer)> answer);
  // Not the router's thread (vehicle_parameter_files.cpp). Every parameter as Mission Planner's
  // .param (NAME,VALUE) or, `qgc`, QGroundControl's file; a file of either loaded: each parameter
  // that differs set, answered with which took, which were unchanged and which failed.
  void parameter_file(uint8_t system, uint8_t component, bool qgc, std::function<void(Answer)> answer);
  void load_parameters(uint8_t system, uint8_t component, std::string_view body, std::function<void(Answer)> answer);
  // Not the router's thread (vehicle_files.cpp). A file or directory on the component, by MAVFTP:
  // "GET" lists a directory ({"path", "entries": [{"name", "type", "size"}]}) or streams a file
  // (or its {"crc32"} when `crc`); "PUT" writes `body` to it, or `streamed` (its `length` bytes,
  // as a client sends them); "DELETE" removes it.
  static constexpr size_t kFileStreamBytes = 256 * 1024;  // a file read waits while this many are unread
  void file(uint8_t system, uint8_t component, std::string method, std::string path, bool crc, std::string body,
            std::function<void(Answer)> answer, std::shared_ptr<ByteStream> streamed = nullptr, uint64_t length = 0);
  // Not the router's thread (vehicle_logs.cpp). The component's onboard logs by MAVLink's log
  // protocol: "GET" with no id lists them ({"logs": [{"id", "size", "time_utc"}]}); with an id,
  // streams that log (`range`: an HTTP Range header's value, answered 206 with its part);
  // "DELETE" erases them all and lists what is left.
  void log(uint8_t system, uint8_t component, std::string method, std::optional<uint16_t> id, std::string range,
           std::function<void(Answer)> answer);
  // The mission item the component flies now (MISSION_CURRENT), or sets it (MAV_CMD_DO_SET_MISSION_CURRENT).
  void mission_current(uint8_t system, uint8_t component, std::string_view body, std::function<void(Answer)> answer);

 private:
  void frame(const protocol::FrameView& frame);  // the router's thread
  struct MissionJob;
  struct ParameterLoad;
  struct FileJob;
  struct LogJob;
  void read_log(std::shared_ptr<LogJob> job, uint16_t id, uint64_t size, const std::string& range);
  void read_file(std::shared_ptr<FileJob> job);              // the router's thread
  uint16_t& ftp_seq(const FileJob& job);                     // the router's thread
  void next_parameter(std::shared_ptr<ParameterLoad> load);  // the router's thread
  void next_list(std::shared_ptr<MissionJob> job);           // the router's thread
  Router& router_;
  Component& component_;
  MessageJson json_;
  NewestFrames* newest_ = nullptr;  // the component's; the router's thread
  struct Rendered {
    std::mutex mutex;
    std::shared_ptr<const std::string> text;  // under mutex: the whole tree, with a newline
    std::chrono::steady_clock::time_point at;
  };
  mutable Rendered rendered_;
  std::vector<std::shared_ptr<JsonFeed>> feeds_;  // the router's thread
  std::string text_;                              // the router's thread: reused for each frame's JSON
  transport::EventLoop::TimerId batch_ = 0;       // the router's thread: texts wait for it
  Subscription subscription_;                     // every frame, while feeds_ has clients: the tree alone needs none
  Transactions& transactions_;                    // the component's; the router's thread
  VehicleParameters parameters_;                  // the router's thread
  std::map<uint16_t, uint16_t> ftp_seqs_;         // the router's thread: MAVFTP's next sequence number by component
};

}  // namespace mavswitch::vehicle
