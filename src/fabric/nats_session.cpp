#include "fabric/nats_session.hpp"

#include <fmt/format.h>
#include <nats/nats.h>

#include <stdexcept>
#include <vector>

#include "base/blocking_work.hpp"
#include "base/log.hpp"
#include "fabric/fleet_state.hpp"
#include "fabric/nats_check.hpp"
#include "fabric/nats_credentials.hpp"
#include "fabric/nats_poller.hpp"

namespace mavswitch::fabric {
namespace {

constexpr int64_t kReconnectWaitMs = 250;
constexpr int64_t kPingIntervalMs = 2000;  // a silent server is given up after two unanswered pings

std::string last_error(natsConnection* nc, natsStatus fallback) {
  const char* why = nullptr;
  if (nc != nullptr) natsConnection_GetLastError(nc, &why);
  return why != nullptr && *why != '\0' ? why : natsStatus_GetText(fallback);
}

}  // namespace

NatsSession::~NatsSession() {
  if (options != nullptr) natsOptions_Destroy(options);
  if (admin_options != nullptr) natsOptions_Destroy(admin_options);
}

void NatsSession::post(std::function<void()> task) {
  std::lock_guard lock(mutex_);
  post_locked(std::move(task));
}

// The task runs only if the endpoint is still there when its turn comes: it is going on the
// same thread, and says so first (stop()).
void NatsSession::post_locked(std::function<void()> task) {
  if (stopping_) return;
  loop.post([self = shared_from_this(), task = std::move(task)] {
    if (self->live()) task();
  });
}

bool NatsSession::live() const {
  std::lock_guard lock(mutex_);
  return !stopping_;
}

bool NatsSession::take(natsConnection* made) {
  std::lock_guard lock(mutex_);
  if (stopping_) return false;
  if (made_ == made) made_ = nullptr;
  return true;
}

void NatsSession::note(const std::string& what, bool trouble) {
  {
    // Trouble is said once until the next success: a refused login retried every 2 s, or a
    // cluster down for an hour, is one line, not one per try.
    std::lock_guard lock(mutex_);
    if (stopping_ || (trouble && troubled_) || (!trouble && what == said_)) return;
    troubled_ = trouble;
    said_ = what;
  }
  if (trouble)
    log::error("nats {}: {}", name, what);
  else
    log::info("nats {}: {}", name, what);
}

std::string NatsSession::url_list() const {
  std::string urls;
  for (const auto& u : settings.urls) urls += (urls.empty() ? "" : ",") + u;
  return urls;
}

std::string NatsSession::connected_to() const {
  std::lock_guard lock(mutex_);
  return server_;
}

void NatsSession::job(bool connect_first, std::function<void(Outcome)> done) {
  MAVSWITCH_ASSERT_BLOCKING_WORK("NatsSession::job");
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    running_ = true;
  }
  Outcome outcome;
  bool connected = !connect_first;
  if (connect_first) {
    natsConnection* fresh = connect();
    connected = fresh != nullptr;
    std::unique_lock lock(mutex_);
    if (stopping_) {
      // The endpoint is going: what this made is closed here, while stop() still waits (after
      // it, libnats' calls into the loop would find it gone).
      lock.unlock();
      if (fresh != nullptr) natsConnection_Destroy(fresh);
      connected = false;
    } else {
      made_ = outcome.made = fresh;  // stop() takes it if the loop does not
    }
  }
  if (connected && settings.fleet_state) outcome.fleet_kept = keep_fleet_state();
  std::lock_guard lock(mutex_);
  post_locked([done = std::move(done), outcome] { done(outcome); });
  running_ = false;
  idle_.notify_all();
}

natsConnection* NatsSession::stop() {
  std::unique_lock lock(mutex_);
  stopping_ = true;
  // A handshake under way ends at once; a connect tries the next server, so look again.
  for (int i = 0; running_ && i < 100; ++i) {
    lock.unlock();
    guard->look(true);
    lock.lock();
    idle_.wait_for(lock, HandshakeGuard::kLook, [&] { return !running_; });
  }
  return std::exchange(made_, nullptr);
}

void NatsSession::outlive_callbacks() {
  std::lock_guard lock(mutex_);
  if (closed_calls_ < connections_made_) self_ = shared_from_this();
}

natsConnection* NatsSession::connect() {
  natsConnection* fresh = nullptr;
  guard->begin();
  post(arm_guard_);
  const natsStatus s = natsConnection_Connect(&fresh, options);
  guard->end();
  if (s != NATS_OK) {
    // This thread's last error ("Authorization Violation", ...), without the library's
    // "(conn.c:2088): " in front.
    std::string why = nats_GetLastError(nullptr) != nullptr ? nats_GetLastError(nullptr) : "";
    if (why.starts_with('(') && why.find("): ") != std::string::npos) why.erase(0, why.find("): ") + 3);
    // libnats' words for a server that hung up mid sign-in; a server asking for a TLS client
    // certificate the router did not show does that.
    if (why.ends_with("got ''")) why = "the server hung up while the router signed in: " + why;
    note(fmt::format("cannot connect to {} ({}); trying again every {} s", url_list(),
                     why.empty() ? natsStatus_GetText(s) : why, kRetryMs / 1000),
         true);
    return nullptr;
  }
  char url[256] = "";
  natsConnection_GetConnectedUrl(fresh, url, sizeof url);
  note(std::string("connected to ") + url, false);
  std::lock_guard lock(mutex_);
  server_ = url;
  ++connections_made_;
  return fresh;
}

// On a connection of its own, driven by libnats' threads, not by the loop: the loop need not
// run for JetStream's answers, and the endpoint going cuts it as a handshake (the guard is
// active all along).
bool NatsSession::keep_fleet_state() {
  natsConnection* admin = nullptr;
  guard->begin();
  post(arm_guard_);
  bool kept = false;
  if (natsConnection_Connect(&admin, admin_options) == NATS_OK) {
    kept = keep_fleet_stream(admin);
    natsConnection_Destroy(admin);
  } else {
    note(fmt::format("FleetState: cannot connect to {} to keep its stream; trying again every {} s", url_list(),
                     kRetryMs / 1000),
         true);
  }
  guard->end();
  return kept;
}

bool NatsSession::keep_fleet_stream(natsConnection* connection) {
  jsCtx* js = nullptr;
  jsOptions js_options;
  jsOptions_Init(&js_options);
  js_options.Wait = 2000;  // a cluster without JetStream may never answer: well within the guard's time
  if (natsConnection_JetStream(&js, connection, &js_options) != NATS_OK) return false;
  const std::string stream = fabric::fleet_stream_name(settings.prefix);
  std::vector<std::string> subjects;
  for (const char* m : fabric::kFleetStateMessages) {
    for (auto& s : fabric::fleet_state_subjects(settings.prefix, m)) subjects.push_back(std::move(s));
  }
  std::vector<const char*> subject_list;
  for (const auto& s : subjects) subject_list.push_back(s.c_str());
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = stream.c_str();
  config.Description = "mavswitch: the latest HEARTBEAT, position and status of every system";
  config.Subjects = subject_list.data();
  config.SubjectsLen = static_cast<int>(subject_list.size());
  config.MaxMsgsPerSubject = 1;  // the latest value of each system's each message
  config.Storage = js_FileStorage;
  config.Replicas = settings.fleet_replicas;
  jsStreamInfo* info = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&info, js, &config, nullptr, &code);
  if (s != NATS_OK && code == JSStreamNameExistErr) s = js_UpdateStream(&info, js, &config, nullptr, &code);
  if (s == NATS_OK) {
    note("fleet state kept in JetStream stream " + stream, false);
    jsStreamInfo_Destroy(info);
  } else {  // no JetStream on the cluster, or it is still electing its leader: tried again
    const char* why = nats_GetLastError(nullptr);
    note(fmt::format("FleetState: cannot keep stream {} ({}); trying again every {} s", stream,
                     s == NATS_NO_RESPONDERS || s == NATS_TIMEOUT ? fabric::kNoJetStream
                     : why != nullptr && *why != '\0'             ? why
                                                                  : natsStatus_GetText(s),
                     kRetryMs / 1000),
         true);
  }
  jsCtx_Destroy(js);
  return s == NATS_OK;
}

// The servers (the first listed first), who the router is, and how long a handshake may take.
natsOptions* NatsSession::base_options(const std::string& label) const {
  natsOptions* o = nullptr;
  check(natsOptions_Create(&o), "options");
  try {
    std::vector<const char*> urls;
    for (const auto& u : settings.urls) urls.push_back(u.c_str());
    check(natsOptions_SetServers(o, urls.data(), static_cast<int>(urls.size())), "Url");
    check(natsOptions_SetName(o, ("mavswitch " + name + label).c_str()), "name");
    check(natsOptions_SetNoRandomize(o, true), "server order");
    // Past the guard's time for a handshake, so the guard ends a stalled one first (libnats 3.4.1
    // spins once this expires mid-handshake; see nats_handshake_guard.hpp). Also the TCP connect's.
    check(natsOptions_SetTimeout(o, HandshakeGuard::kHandshake.count() + 1000), "timeout");
    set_credentials(o, settings);
  } catch (...) {
    natsOptions_Destroy(o);
    throw;
  }
  return o;
}

void NatsSession::set_options(std::shared_ptr<NatsDrive> drive, std::function<void()> on_closed,
                              std::function<void()> arm_guard) {
  on_closed_ = std::move(on_closed);
  arm_guard_ = std::move(arm_guard);
  guard = std::make_unique<HandshakeGuard>(settings.urls);
  options = base_options("");
  check(natsOptions_SetNoEcho(options, true), "no echo");
  check(natsOptions_SetMaxReconnect(options, -1), "reconnect");  // forever
  check(natsOptions_SetReconnectWait(options, kReconnectWaitMs), "reconnect");
  check(natsOptions_SetReconnectBufSize(options, static_cast<int>(settings.reconnect_buffer)), "ReconnectBuffer");
  check(natsOptions_SetPingInterval(options, kPingIntervalMs), "ping");
  check(natsOptions_SetMaxPingsOut(options, 2), "ping");
  if (settings.fleet_state) {  // the same servers and credentials, on libnats' own threads, briefly
    admin_options = base_options(" FleetState");
    check(natsOptions_SetAllowReconnect(admin_options, false), "reconnect");
  }
  // libnats' callback thread calls these: they say what happened, or post to the loop.
  check(natsOptions_SetDisconnectedCB(
            options,
            [](natsConnection* nc, void* closure) {
              auto* s = static_cast<NatsSession*>(closure);
              s->guard->begin();  // libnats' reconnect thread shakes hands next
              s->post(s->arm_guard_);
              s->note("disconnected (" + last_error(nc, NATS_CONNECTION_CLOSED) + "); reconnecting", true);
              std::lock_guard lock(s->mutex_);
              s->server_.clear();
            },
            this),
        "callbacks");
  check(natsOptions_SetReconnectedCB(
            options,
            [](natsConnection* nc, void* closure) {
              auto* s = static_cast<NatsSession*>(closure);
              s->guard->end();
              ++s->reconnects;
              char url[256] = "";
              natsConnection_GetConnectedUrl(nc, url, sizeof url);
              s->note(std::string("reconnected to ") + url, false);
              std::lock_guard lock(s->mutex_);
              s->server_ = url;
            },
            this),
        "callbacks");
  check(natsOptions_SetClosedCB(
            options,
            [](natsConnection* nc, void* closure) {
              auto* s = static_cast<NatsSession*>(closure);
              s->guard->end();
              s->note("connection closed (" + last_error(nc, NATS_CONNECTION_CLOSED) + "); trying again every " +
                          std::to_string(kRetryMs / 1000) + " s",
                      true);
              std::shared_ptr<NatsSession> last;  // released as this returns: the session's last touch
              std::lock_guard lock(s->mutex_);
              s->server_.clear();
              if (++s->closed_calls_ >= s->connections_made_) last = std::move(s->self_);
              s->post_locked(s->on_closed_);
            },
            this),
        "callbacks");
  // Read and written by the endpoint's loop, not by threads of libnats' own.
  drive->install(options);
}

}  // namespace mavswitch::fabric
