#include "daemon/nats_endpoint.hpp"

#include <fmt/format.h>
#include <nats/nats.h>

#include <chrono>
#include <stdexcept>

#include "base/fleet_state.hpp"
#include "base/log.hpp"
#include "daemon/endpoint_control.hpp"

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

// The fabric as one link: frames the router sends it are published by its writer thread.
class NatsEndpoint::FabricLink final : public ForeignLink {
 public:
  FabricLink(NatsEndpoint& owner, Router& router, std::string name, size_t queue_frames)
      : ForeignLink(router, std::move(name), queue_frames), owner_(owner) {}

 private:
  Written write(std::span<const uint8_t> frame) override {
    // A frame from a system behind this router: what targets that system is asked for now.
    const uint8_t source = frame[0] == protocol::kMagicV2 ? frame[5] : frame[3];
    bool known = false;
    {
      std::lock_guard lock(owner_.mutex_);
      known = owner_.interest_.test(source);
      owner_.interest_.set(source);
    }
    if (!known) owner_.subscribe(fmt::format("{}.to.{}.>", owner_.settings_.prefix, source));
    const std::string subject = subject_of(owner_.settings_.prefix, frame, router_.routing_table());
    return owner_.publish(subject, frame) ? Written::kSent : Written::kDropped;
  }
  NatsEndpoint& owner_;
};

NatsEndpoint::NatsEndpoint(Router& router, const EndpointConfig& config,
                           std::shared_ptr<const routing::LinkPolicy> policy)
    : router_(router), name_(config.spec.name), settings_(config.nats), policy_(std::move(policy)) {}

NatsEndpoint::~NatsEndpoint() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  keeper_wake_.notify_all();
  if (keeper_.joinable()) keeper_.join();
  if (link_) link_->close();  // the writer stops publishing first
  std::lock_guard lock(connection_mutex_);
  if (connection_ != nullptr) natsConnection_Close(connection_);  // its callbacks see stopping_
  for (natsSubscription* s : subscriptions_) natsSubscription_Destroy(s);
  if (connection_ != nullptr) natsConnection_Destroy(connection_);
  if (options_ != nullptr) natsOptions_Destroy(options_);
}

std::string NatsEndpoint::subject_of(const std::string& prefix, std::span<const uint8_t> frame,
                                     const protocol::MessageTable& table) {
  const bool v2 = frame[0] == protocol::kMagicV2;
  const size_t header = v2 ? protocol::kHeaderLenV2 : protocol::kHeaderLenV1;
  const uint8_t sys = frame[v2 ? 5 : 3], comp = frame[v2 ? 6 : 4], payload_len = frame[1];
  const uint32_t msgid = v2 ? uint32_t(frame[7]) | uint32_t(frame[8]) << 8 | uint32_t(frame[9]) << 16 : frame[5];
  const protocol::MessageInfo* info = table.find(msgid);
  const std::string message = info != nullptr ? std::string(info->name) : std::to_string(msgid);
  // A byte past a truncated v2 payload is zero, as the sender meant it.
  auto payload = [&](int offset) -> uint8_t {
    return offset >= 0 && offset < payload_len ? frame[header + static_cast<size_t>(offset)] : 0;
  };
  const uint8_t target = info != nullptr ? payload(info->target_system_offset) : 0;
  if (target != 0)
    return fmt::format("{}.to.{}.{}.{}", prefix, target, payload(info->target_component_offset), message);
  return fmt::format("{}.from.{}.{}.{}", prefix, sys, comp, message);
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

bool NatsEndpoint::publish(const std::string& subject, std::span<const uint8_t> frame) {
  std::lock_guard lock(connection_mutex_);
  return connection_ != nullptr &&
         natsConnection_Publish(connection_, subject.c_str(), frame.data(), static_cast<int>(frame.size())) == NATS_OK;
}

void NatsEndpoint::subscribe(const std::string& subject) {
  std::lock_guard lock(connection_mutex_);
  if (connection_ == nullptr) return;  // connect() subscribes to it
  // Once per connection: the writer (a new system heard) and connect() (all of them) may both
  // ask, and two subscriptions would deliver each message twice.
  if (!subscribed_.insert(subject).second) return;
  natsSubscription* sub = nullptr;
  const natsStatus s = natsConnection_Subscribe(
      &sub, connection_, subject.c_str(),
      [](natsConnection*, natsSubscription*, natsMsg* msg, void* self) {
        static_cast<NatsEndpoint*>(self)->on_message(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
        natsMsg_Destroy(msg);
      },
      this);
  if (s == NATS_OK) {
    subscriptions_.push_back(sub);
    return;
  }
  subscribed_.erase(subject);
  if (s != NATS_CONNECTION_CLOSED) {  // closed: the keeper subscribes again
    log::error("nats {}: cannot subscribe to {}: {}", name_, subject, natsStatus_GetText(s));
  }
}

std::vector<std::string> NatsEndpoint::subjects() const {
  std::vector<std::string> all;
  for (const auto& s : settings_.subscribe) all.push_back(settings_.prefix + "." + s);
  std::lock_guard lock(mutex_);
  for (unsigned sys = 0; sys < 256; ++sys) {
    if (interest_.test(sys)) all.push_back(fmt::format("{}.to.{}.>", settings_.prefix, sys));
  }
  return all;
}

void NatsEndpoint::on_message(const void* data, int size) {
  if (size > 0) link_->received({static_cast<const uint8_t*>(data), static_cast<size_t>(size)});
}

bool NatsEndpoint::connect() {
  natsConnection* fresh = nullptr;
  const natsStatus s = natsConnection_Connect(&fresh, options_);
  if (s != NATS_OK) {
    // This thread's last error ("Authorization Violation", ...), without the library's
    // "(conn.c:2088): " in front.
    std::string why = nats_GetLastError(nullptr) != nullptr ? nats_GetLastError(nullptr) : "";
    if (why.starts_with('(') && why.find("): ") != std::string::npos) why.erase(0, why.find("): ") + 3);
    note(fmt::format("cannot connect to {} ({}); trying again every {} s", url_list(),
                     why.empty() ? natsStatus_GetText(s) : why, kRetry.count()),
         true);
    return false;
  }
  char url[256] = "";
  natsConnection_GetConnectedUrl(fresh, url, sizeof url);
  note(std::string("connected to ") + url, false);
  natsConnection* old = nullptr;
  std::vector<natsSubscription*> old_subscriptions;
  {
    std::lock_guard lock(connection_mutex_);
    old = connection_;
    old_subscriptions.swap(subscriptions_);
    subscribed_.clear();
    connection_ = fresh;
  }
  for (natsSubscription* sub : old_subscriptions) natsSubscription_Destroy(sub);
  if (old != nullptr) natsConnection_Destroy(old);
  for (const auto& subject : subjects()) subscribe(subject);
  return true;
}

bool NatsEndpoint::keep_fleet_state() {
  jsCtx* js = nullptr;
  if (natsConnection_JetStream(&js, connection_, nullptr) != NATS_OK) return false;
  const std::string name = base::fleet_stream_name(settings_.prefix);
  std::vector<std::string> subjects;
  for (const char* m : base::kFleetStateMessages) subjects.push_back(base::fleet_state_subject(settings_.prefix, m));
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
                     why != nullptr && *why != '\0' ? why : natsStatus_GetText(s), kRetry.count()),
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
    if (!first && keeper_wake_.wait_for(lock, kRetry, [&] { return stopping_; })) return;
    if (stopping_) return;
    const bool reconnect = closed_;
    lock.unlock();
    const bool connected = !reconnect || connect();
    const bool fleet_kept =
        !connected || !settings_.fleet_state || (!reconnect && !fleet_pending) || keep_fleet_state();
    lock.lock();
    closed_ = !connected;
    fleet_pending = !fleet_kept;
  }
}

void NatsEndpoint::start() {
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
  if (!settings_.user.empty())
    check(natsOptions_SetUserInfo(options_, settings_.user.c_str(), settings_.password.c_str()), "User");
  if (!settings_.token.empty()) check(natsOptions_SetToken(options_, settings_.token.c_str()), "Token");
  if (!settings_.credentials_file.empty())
    check(natsOptions_SetUserCredentialsFromFiles(options_, settings_.credentials_file.c_str(), nullptr),
          "CredentialsFile " + settings_.credentials_file);
  if (!settings_.nkey_seed_file.empty())
    check(natsOptions_SetNKeyFromSeed(options_, settings_.nkey.c_str(), settings_.nkey_seed_file.c_str()),
          "NKeySeedFile " + settings_.nkey_seed_file);
  if (!settings_.ca_file.empty()) {
    check(natsOptions_SetSecure(options_, true), "TLS");
    check(natsOptions_LoadCATrustedCertificates(options_, settings_.ca_file.c_str()), "CaFile " + settings_.ca_file);
  }
  if (!settings_.certificate_file.empty())
    check(natsOptions_LoadCertificatesChain(options_, settings_.certificate_file.c_str(), settings_.key_file.c_str()),
          "CertificateFile " + settings_.certificate_file);
  // libnats' threads call these: they only say what happened, or wake the keeper.
  check(natsOptions_SetDisconnectedCB(
            options_,
            [](natsConnection* nc, void* closure) {
              static_cast<NatsEndpoint*>(closure)->note(
                  "disconnected (" + last_error(nc, NATS_CONNECTION_CLOSED) + "); reconnecting", true);
            },
            this),
        "callbacks");
  check(natsOptions_SetReconnectedCB(
            options_,
            [](natsConnection* nc, void* closure) {
              auto* e = static_cast<NatsEndpoint*>(closure);
              ++e->reconnects_;
              char url[256] = "";
              natsConnection_GetConnectedUrl(nc, url, sizeof url);
              e->note(std::string("reconnected to ") + url, false);
            },
            this),
        "callbacks");
  check(natsOptions_SetClosedCB(
            options_,
            [](natsConnection* nc, void* closure) {
              auto* e = static_cast<NatsEndpoint*>(closure);
              e->note("connection closed (" + last_error(nc, NATS_CONNECTION_CLOSED) + "); trying again every " +
                          std::to_string(kRetry.count()) + " s",
                      true);
              {
                std::lock_guard lock(e->mutex_);
                e->closed_ = true;
              }
              e->keeper_wake_.notify_all();
            },
            this),
        "callbacks");
  // The link first, so what the subscriptions bring has somewhere to go; the connection on the
  // keeper's thread (a server that does not answer must not hold the router's start).
  link_ = std::make_shared<FabricLink>(*this, router_, name_, settings_.queue_frames);
  link_->start(policy_);
  closed_ = true;
  keeper_ = std::thread([this] { keep_connected(); });
}

std::string NatsEndpoint::server() const {
  std::lock_guard lock(connection_mutex_);
  char url[256] = "";
  return connection_ != nullptr && natsConnection_GetConnectedUrl(connection_, url, sizeof url) == NATS_OK ? url : "";
}

std::string NatsEndpoint::url_list() const {
  std::string urls;
  for (const auto& u : settings_.urls) urls += (urls.empty() ? "" : ",") + u;
  return urls;
}

std::string NatsEndpoint::description() const {
  const std::string at = server();
  return fmt::format("nats {} {} prefix {}: {}, {} reconnects", name_, url_list(), settings_.prefix,
                     at.empty() ? "not connected" : "connected to " + at, reconnects());
}

std::vector<std::unique_ptr<NatsEndpoint>> open_fabrics(Router& router, std::vector<EndpointConfig>& sections) {
  std::vector<std::unique_ptr<NatsEndpoint>> fabrics;
  for (auto& section : sections) {
    auto policy = std::make_shared<const routing::LinkPolicy>(policy_of(router, section, true));
    auto fabric = std::make_unique<NatsEndpoint>(router, section, std::move(policy));
    try {
      fabric->start();
      fabrics.push_back(std::move(fabric));
    } catch (const std::exception& e) {
      log::error("{}: nats {}: {}; routing on without it", section.source, section.spec.name, e.what());
    }
  }
  return fabrics;
}

ForeignLinkReport NatsEndpoint::report() const {
  ForeignLinkReport r = link_ ? link_->report() : ForeignLinkReport{name_, {}, {}, 0};
  std::lock_guard lock(connection_mutex_);
  if (connection_ != nullptr) r.queued_bytes += static_cast<size_t>(std::max(0, natsConnection_Buffered(connection_)));
  return r;
}

}  // namespace mavswitch::daemon
