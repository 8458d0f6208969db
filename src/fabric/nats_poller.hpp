// Drives libnats connections from the fabric link's worker's EventLoop (libnats' external event
// loop API). That thread watches a connection's socket, reads it
// (natsConnection_ProcessReadEvent), and writes what was published during a loop iteration in
// one write when it ends (ProcessWriteEvent, from the link's flush). libnats keeps its own
// threads only for what is not per frame: reconnecting, pings.
//
// libnats calls the adapter from any of its threads, holding the connection's lock. A call on the
// worker's thread acts at once; others are posted to it, in order. The socket is watched through
// a duplicate of its descriptor that only the worker's thread closes: libnats closing its own on
// another thread never lets the number be reused under the loop.
//
// A maximum payload: libnats 3.4 takes a message of any announced size, growing a buffer as its
// bytes come (a hostile server's "MSG x 1 2000000000" held 378 MB), and keeps that half-read
// message across its own reconnects. Each read is at most its buffer (32 KiB); bytes read with no
// message finished are summed, and past kMaxPayload the connection is closed, parser and all (the
// keeper makes a new one, later each time this repeats: libnats 3.4 frees the parser but not such
// a buffer, so each time costs up to kMaxPayload, and the back-off bounds how often).
//
// With TLS, libnats reads a TLS record to its end inside ProcessReadEvent: a record cut off by a
// dying link holds the worker's thread until the pings give the connection up (about 4 s). That
// is libnats' design; reading TLS on a thread of our own again was not worth a second path.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "transport/event_loop.hpp"

struct __natsConnection;
struct __natsOptions;

namespace mavswitch::fabric {

class NatsPoller;

// What one endpoint's connections are driven by: made with make_shared, and kept as long as the
// options it is installed in (their pollers hold it too, until forgotten).
class NatsDrive : public std::enable_shared_from_this<NatsDrive> {
 public:
  // A fabric message is one MAVLink frame (280 bytes at most); what else comes unasked (INFO on a
  // cluster change) is a few KiB.
  static constexpr size_t kMaxPayload = 64 * 1024;

  // Both on the loop's thread. after_read: after each read, routes what the read brought and
  // says how many messages that was. wants_write: libnats has bytes to write; flush() writes them.
  NatsDrive(transport::EventLoop& loop, std::string name, std::function<size_t()> after_read,
            std::function<void()> wants_write)
      : loop_(loop), name_(std::move(name)), after_read_(std::move(after_read)), wants_write_(std::move(wants_write)) {}
  ~NatsDrive();
  NatsDrive(const NatsDrive&) = delete;
  NatsDrive& operator=(const NatsDrive&) = delete;

  // Connections made with these options are driven by this. Throws std::runtime_error.
  void install(__natsOptions* options);
  // The loop's thread (or while it does not run), before natsConnection_Destroy: nothing
  // calls into the connection after this.
  void forget(__natsConnection* connection);
  void forget_all();  // the same, for every connection: the endpoint is going, and none is
                      // watched from now on (one it was still making is closed as it comes)
  // The loop's thread: writes what libnats holds for each connection; what the socket does not
  // take waits for it to be writable.
  void flush();

 private:
  friend class NatsPoller;
  transport::EventLoop& loop_;
  const std::string name_;  // the endpoint's, for what is said
  std::function<size_t()> after_read_;
  std::function<void()> wants_write_;
  // The loop's thread: the poller of each connection attached.
  std::unordered_map<__natsConnection*, std::shared_ptr<NatsPoller>> pollers_;
  bool said_oversized_ = false;                        // the loop's thread
  bool gone_ = false;                                  // the loop's thread: forget_all() was called
  std::vector<std::shared_ptr<NatsPoller>> flushing_;  // the loop's thread: flush()'s copy: said, and no message since

 public:
  // Connections closed in a row for an oversized message, with no message through since (any
  // thread reads it: the keeper backs off by it).
  std::atomic<int> oversized_in_row{0};
};

}  // namespace mavswitch::fabric
