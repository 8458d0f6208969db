// Bytes that one thread makes and another takes as they come: a file read from a vehicle into an
// HTTP answer, or a request's body written to a vehicle. Bounded: the maker looks at room() and
// waits while it is short; nothing written is lost (write() past the room still keeps it, so a
// packet in flight fits). Either side may end it: the maker with finish() (whole, or failed),
// the reader with cancel() (its client went). `on_data` (set by the reader) is called on the
// maker's thread when bytes or the end came; a maker that asked wait_for_room() is called back
// on the reader's thread once take() made room. Both outside the lock.
//
// Chose not to build: a wake-up for a reader that polls (a vehicle's transaction looks again on
// its own next turn, a few hundred milliseconds at most).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace mavswitch {

class ByteStream {
 public:
  enum class State { kOpen, kWhole, kFailed, kCancelled };
  explicit ByteStream(size_t capacity) : capacity_(capacity) {}

  // The maker's side.
  size_t room() const;
  void write(std::string_view bytes);
  void finish(bool whole);
  bool cancelled() const;
  // True when there is no room now: `ring` is then called once, when take() has made some.
  bool wait_for_room(std::function<void()> ring);

  // The reader's side. take() copies out up to `max` bytes; `last` says the stream is whole and
  // nothing more will come.
  void on_data(std::function<void()> ring);
  size_t take(uint8_t* out, size_t max, bool* last);
  size_t available() const;  // bytes take() would give now
  State state() const;
  void cancel();

 private:
  void ring();
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::string held_;  // bytes not yet taken, from held_at_
  size_t held_at_ = 0;
  State state_ = State::kOpen;
  std::function<void()> ring_;
  std::function<void()> room_ring_;  // the maker waits for room
};

}  // namespace mavswitch
