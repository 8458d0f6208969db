#include "fabric/nats_endpoint.hpp"

#include <fmt/format.h>
#include <nats/nats.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "base/log.hpp"
#include "fabric/fleet_state.hpp"
#include "fabric/nats_credentials.hpp"
#include "fabric/nats_poller.hpp"

namespace mavswitch::daemon {
namespace {

constexpr int64_t kReconnectWaitMs = 250;
constexpr int64_t kPingIntervalMs = 2000;  // a silent server is given up after two unanswered pings
// A connection refused (no server up, credentials refused), or one libnats gave up on, is
// tried again this long after.
constexpr auto kRetry = std::chrono::seconds(2);

void check(natsStatus s, const std::string& what) {
  if (s != NATS_OK) throw std::runtime_error(what + ": " + natsStatus_GetText(s));
}

std::string last_error(natsConnection* nc, natsStatus fallback) {
  const char* why = nullptr;
  if (nc != nullptr) natsConnection_GetLastError(nc, &why);
  return why != nullptr && *why != '\0' ? why : natsStatus_GetText(fallback);
}

}  // namespace

class NatsMaker final : public transport::EndpointMaker {
 public:
  NatsMaker(const NatsSettings& settings, int64_t route_timeout) : settings_(settings), route_timeout_(route_timeout) {}
  const char* kind() const noexcept override { return "nats"; }
  std::unique_ptr<transport::Endpoint> make(transport::EndpointSpec spec, transport::LinkHost& host) const override {
    return std::make_unique<NatsEndpoint>(std::move(spec), host, settings_, route_timeout_);
  }

 private:
  const NatsSettings settings_;
  const int64_t route_timeout_;
};

std::shared_ptr<const transport::EndpointMaker> nats_maker(const NatsSettings& settings, int64_t route_timeout) {
  return std::make_shared<NatsMaker>(settings, route_timeout);
}

NatsEndpoint::NatsEndpoint(transport::EndpointSpec spec, transport::LinkHost& host, const NatsSettings& settings,
                           int64_t route_timeout)
    : Endpoint(std::move(spec), host), name_(spec_.name), settings_(settings), route_timeout_(route_timeout) {}

// The keeper waits for the loop's thread at most 100 ms at a time (a hand-over), and a handshake
// under way is ended at once: this thread waits that long at most.
void NatsEndpoint::stop_keeper() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  keeper_wake_.notify_all();
  if (guard_) guard_->wake();
  if (keeper_.joinable()) keeper_.join();
}

NatsEndpoint::~NatsEndpoint() {
  stop_keeper();
  std::vector<natsConnection*> going;
  if (link_) {
    if (natsConnection* c = link_->use(nullptr)) going.push_back(c);
  }
  if (abandoned_ != nullptr) going.push_back(abandoned_);
  for (natsConnection* c : going) {
    // What is buffered goes now: left there, closing would wait for the server's answer to a
    // flush that only this thread could read.
    natsConnection_ProcessWriteEvent(c);
    drive_->forget(c);
    natsConnection_Destroy(c);
  }
  if (drive_) drive_->forget_all();
  // libnats says "closed" of each connection made, once, on a thread of its own and later
  // (promptly: its callback thread runs nothing else of ours): this must outlive the last of
  // those calls.
  std::unique_lock lock(mutex_);
  keeper_wake_.wait_for(lock, std::chrono::seconds(5), [&] { return closed_calls_ >= connections_made_; });
  lock.unlock();
  if (options_ != nullptr) natsOptions_Destroy(options_);
}

void NatsEndpoint::note(const std::string& what, bool trouble) {
  {
    // Trouble is said once until the next success: a refused login retried every 2 s, or a
    // cluster down for an hour, is one line, not one per try.
    std::lock_guard lock(mutex_);
    if (stopping_ || (trouble && troubled_) || (!trouble && what == said_)) return;
    troubled_ = trouble;
    said_ = what;
  }
  if (trouble)
    log::error("nats {}: {}", name_, what);
  else
    log::info("nats {}: {}", name_, what);
}

bool NatsEndpoint::connect() {
  natsConnection* fresh = nullptr;
  guard_->begin();
  const natsStatus s = natsConnection_Connect(&fresh, options_);
  guard_->end();
  if (s != NATS_OK) {
    // This thread's last error ("Authorization Violation", ...), without the library's
    // "(conn.c:2088): " in front.
    std::string why = nats_GetLastError(nullptr) != nullptr ? nats_GetLastError(nullptr) : "";
    if (why.starts_with('(') && why.find("): ") != std::string::npos) why.erase(0, why.find("): ") + 3);
    // libnats' words for a server that hung up mid sign-in; a server asking for a TLS client
    // certificate the router did not show does that.
    if (why.ends_with("got ''")) why = "the server hung up while the router signed in: " + why;
    note(fmt::format("cannot connect to {} ({}); trying again every {} s", url_list(),
                     why.empty() ? natsStatus_GetText(s) : why, kRetry.count()),
         true);
    return false;
  }
  char url[256] = "";
  natsConnection_GetConnectedUrl(fresh, url, sizeof url);
  note(std::string("connected to ") + url, false);
  {
    std::lock_guard lock(mutex_);
    server_ = url;
    ++connections_made_;
  }
  // The link takes it on the worker's thread, where the old one (libnats gave it up) goes: that
  // thread may still be reading it. Posted: a loop not running yet runs it when it starts, and
  // one that stopped never does. The keeper waits for either, or for the endpoint to stop.
  struct Handover {
    std::mutex mutex;
    std::condition_variable done_or_not;
    bool done = false, abandoned = false;
  };
  auto handover = std::make_shared<Handover>();
  host_.loop().post([this, handover, fresh] {
    std::lock_guard lock(handover->mutex);
    if (handover->abandoned) return;
    if (natsConnection* old = link_->use(fresh)) {
      drive_->forget(old);
      natsConnection_Destroy(old);
    }
    handover->done = true;
    handover->done_or_not.notify_all();
  });
  std::unique_lock lock(handover->mutex);
  while (!handover->done) {
    handover->done_or_not.wait_for(lock, std::chrono::milliseconds(100));
    std::lock_guard state(mutex_);
    if (stopping_ && !handover->done) {
      handover->abandoned = true;
      abandoned_ = fresh;  // the destructor's to close, on the worker's thread or after it
      return false;
    }
  }
  connection_ = fresh;
  return true;
}

bool NatsEndpoint::keep_fleet_state() {
  jsCtx* js = nullptr;
  if (natsConnection_JetStream(&js, connection_, nullptr) != NATS_OK) return false;
  const std::string name = fabric::fleet_stream_name(settings_.prefix);
  std::vector<std::string> subjects;
  for (const char* m : fabric::kFleetStateMessages)
    subjects.push_back(fabric::fleet_state_subject(settings_.prefix, m));
  std::vector<const char*> subject_list;
  for (const auto& s : subjects) subject_list.push_back(s.c_str());
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = name.c_str();
  config.Description = "mavswitch: the latest HEARTBEAT, position and status of every system";
  config.Subjects = subject_list.data();
  config.SubjectsLen = static_cast<int>(subject_list.size());
  config.MaxMsgsPerSubject = 1;  // the latest value of each system's each message
  config.Storage = js_FileStorage;
  config.Replicas = settings_.fleet_replicas;
  jsStreamInfo* info = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&info, js, &config, nullptr, &code);
  if (s != NATS_OK && code == JSStreamNameExistErr) s = js_UpdateStream(&info, js, &config, nullptr, &code);
  if (s == NATS_OK) {
    note("fleet state kept in JetStream stream " + name, false);
    jsStreamInfo_Destroy(info);
  } else {  // no JetStream on the cluster, or it is still electing its leader: tried again
    const char* why = nats_GetLastError(nullptr);
    note(fmt::format("FleetState: cannot keep stream {} ({}); trying again every {} s", name,
                     s == NATS_NO_RESPONDERS || s == NATS_TIMEOUT ? fabric::kNoJetStream
                     : why != nullptr && *why != '\0'             ? why
                                                                  : natsStatus_GetText(s),
                     kRetry.count()),
         true);
  }
  jsCtx_Destroy(js);
  return s == NATS_OK;
}

void NatsEndpoint::keep_connected() {
  std::unique_lock lock(mutex_);
  bool fleet_pending = false;  // FleetState: the stream not made yet on this connection
  for (bool first = true;; first = false) {
    keeper_wake_.wait(lock, [&] { return stopping_ || closed_ || fleet_pending; });
    // A server that sent an oversized message is tried again later each time (4 s, 8 s, ... 512 s).
    const int oversized = std::min(drive_->oversized_in_row.load(std::memory_order_relaxed), 8);
    if (!first && keeper_wake_.wait_for(lock, kRetry * (1 << oversized), [&] { return stopping_; })) return;
    if (stopping_) return;
    const bool reconnect = closed_;
    lock.unlock();
    const bool connected = !reconnect || connect();
    const bool fleet_kept =
        !connected || !settings_.fleet_state || (!reconnect && !fleet_pending) || keep_fleet_state();
    lock.lock();
    // A connection libnats already gave up (a server that sends an oversized message at once
    // is cut before this thread is back here) stays closed: its closed callback has run.
    closed_ = !connected || closed_calls_ >= connections_made_;
    fleet_pending = !fleet_kept;
  }
}

void NatsEndpoint::set_options() {
  guard_ = std::make_unique<HandshakeGuard>(settings_.urls, [this] {
    std::lock_guard lock(mutex_);
    return stopping_;
  });
  check(natsOptions_Create(&options_), "options");
  std::vector<const char*> urls;
  for (const auto& u : settings_.urls) urls.push_back(u.c_str());
  check(natsOptions_SetServers(options_, urls.data(), static_cast<int>(urls.size())), "Url");
  check(natsOptions_SetName(options_, ("mavswitch " + name_).c_str()), "name");
  check(natsOptions_SetNoEcho(options_, true), "no echo");
  check(natsOptions_SetNoRandomize(options_, true), "server order");  // the first listed first
  check(natsOptions_SetMaxReconnect(options_, -1), "reconnect");      // forever
  check(natsOptions_SetReconnectWait(options_, kReconnectWaitMs), "reconnect");
  check(natsOptions_SetReconnectBufSize(options_, static_cast<int>(settings_.reconnect_buffer)), "ReconnectBuffer");
  check(natsOptions_SetPingInterval(options_, kPingIntervalMs), "ping");
  check(natsOptions_SetMaxPingsOut(options_, 2), "ping");
  // Past the guard's time for a handshake, so the guard ends a stalled one first (libnats 3.4.1
  // spins once this expires mid-handshake; see nats_handshake_guard.hpp). Also the TCP connect's.
  check(natsOptions_SetTimeout(options_, HandshakeGuard::kHandshake.count() + 1000), "timeout");
  set_credentials(options_, settings_);
  // libnats' callback thread calls these: they only say what happened, or wake the keeper.
  check(natsOptions_SetDisconnectedCB(
            options_,
            [](natsConnection* nc, void* closure) {
              auto* e = static_cast<NatsEndpoint*>(closure);
              e->guard_->begin();  // libnats' reconnect thread shakes hands next
              e->note("disconnected (" + last_error(nc, NATS_CONNECTION_CLOSED) + "); reconnecting", true);
              std::lock_guard lock(e->mutex_);
              e->server_.clear();
            },
            this),
        "callbacks");
  check(natsOptions_SetReconnectedCB(
            options_,
            [](natsConnection* nc, void* closure) {
              auto* e = static_cast<NatsEndpoint*>(closure);
              e->guard_->end();
              ++e->reconnects_;
              char url[256] = "";
              natsConnection_GetConnectedUrl(nc, url, sizeof url);
              e->note(std::string("reconnected to ") + url, false);
              std::lock_guard lock(e->mutex_);
              e->server_ = url;
            },
            this),
        "callbacks");
  check(natsOptions_SetClosedCB(
            options_,
            [](natsConnection* nc, void* closure) {
              auto* e = static_cast<NatsEndpoint*>(closure);
              e->guard_->end();
              e->note("connection closed (" + last_error(nc, NATS_CONNECTION_CLOSED) + "); trying again every " +
                          std::to_string(kRetry.count()) + " s",
                      true);
              // The last touch of the endpoint, under its lock: its destructor waits for this.
              std::lock_guard lock(e->mutex_);
              e->closed_ = true;
              e->server_.clear();
              ++e->closed_calls_;
              e->keeper_wake_.notify_all();
            },
            this),
        "callbacks");
  // Read and written by the worker's loop, not by threads of libnats' own.
  drive_ = std::make_shared<NatsDrive>(
      host_.loop(), name_, [this] { return link_->drain(); }, [this] { link_->connected(); },
      [this] { link_->write_soon(); });
  drive_->install(options_);
}

void NatsEndpoint::start() {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "NatsEndpoint::start");
  set_options();
  // The link first, so what the subscriptions bring has somewhere to go; the connection on the
  // keeper's thread (a server that does not answer must not hold the worker).
  link_ = std::make_unique<FabricLink>(*this, host_, settings_, route_timeout_, [this] { drive_->flush(); });
  host_.link_up(*link_);
  closed_ = true;
  keeper_ = std::thread([this] { keep_connected(); });
}

void NatsEndpoint::for_each_link(const std::function<void(const transport::Link&)>& f) const {
  if (link_) f(*link_);
}

std::string NatsEndpoint::server() const {
  std::lock_guard lock(mutex_);
  return server_;
}

std::string NatsEndpoint::url_list() const {
  std::string urls;
  for (const auto& u : settings_.urls) urls += (urls.empty() ? "" : ",") + u;
  return urls;
}

std::string NatsEndpoint::describe() const {
  const std::string at = server();
  return fmt::format("nats {} {} prefix {}: {}, {} reconnects", name_, url_list(), settings_.prefix,
                     at.empty() ? "not connected" : "connected to " + at, reconnects_.load(std::memory_order_relaxed));
}

}  // namespace mavswitch::daemon
