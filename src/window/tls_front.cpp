#include "window/tls_front.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "base/file_read.hpp"

namespace mavswitch::daemon {
namespace {

constexpr int kHandshakeMs = 10'000;  // also each blocking read or write afterwards

constexpr size_t kMaxPem = 1 << 20;  // a certificate chain and its key are a few KiB

// The certificate chain and key from a PEM read by the bounded reader (a FIFO or a device named
// by mistake is an error at start, never a hang).
base::SslContext server_context(const std::string& pem) {
  std::string error;
  const auto text = read_regular_file(pem, kMaxPem, &error);
  if (!text) throw std::runtime_error("Certificate: " + error);
  base::SslContext context(SSL_CTX_new(TLS_server_method()));
  if (!context) throw std::runtime_error("Certificate: " + base::tls_error());
  SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION);
  const std::unique_ptr<BIO, decltype(&BIO_free)> in(BIO_new_mem_buf(text->data(), int(text->size())), BIO_free);
  const auto fail = [&] {
    return std::runtime_error("Certificate: " + pem + ": " + base::tls_error("no certificate and key in it"));
  };
  X509* leaf = in ? PEM_read_bio_X509_AUX(in.get(), nullptr, nullptr, nullptr) : nullptr;
  if (leaf == nullptr || SSL_CTX_use_certificate(context.get(), leaf) != 1) {
    X509_free(leaf);
    throw fail();
  }
  X509_free(leaf);
  while (X509* ca = PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add0_chain_cert(context.get(), ca) != 1) {  // takes it on success
      X509_free(ca);
      throw fail();
    }
  }
  ERR_clear_error();  // the end of the certificates
  BIO_reset(in.get());
  EVP_PKEY* key = PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr);
  const bool key_ok = key != nullptr && SSL_CTX_use_PrivateKey(context.get(), key) == 1;
  EVP_PKEY_free(key);
  if (!key_ok || SSL_CTX_check_private_key(context.get()) != 1) throw fail();
  return context;
}

int listen_on(const std::string& address, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string where = fmt::format("{}:{}", address, port);
  if (const int e = ::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found); e != 0)
    throw std::runtime_error(fmt::format("cannot listen on {}: {}", where, ::gai_strerror(e)));
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  const bool ok = fd >= 0 && ::bind(fd, found->ai_addr, found->ai_addrlen) == 0 && ::listen(fd, 64) == 0;
  const int why = errno;
  ::freeaddrinfo(found);
  if (!ok) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(fmt::format("cannot listen on {}: {}", where, std::strerror(why)));
  }
  return fd;
}

uint16_t local_port(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&a)->sin6_port
                                       : reinterpret_cast<sockaddr_in*>(&a)->sin_port);
}

int connect_backend(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

}  // namespace

TlsFront::TlsFront(const std::string& address, uint16_t port, const std::string& pem, int max_connections)
    : context_(server_context(pem)), max_connections_(static_cast<size_t>(max_connections)) {
  listener_ = listen_on(address, port);
  port_ = local_port(listener_);
  wake_ = ::eventfd(0, EFD_CLOEXEC);
}

void TlsFront::start(uint16_t backend) {
  assert(!acceptor_.joinable() && !stop_);
  backend_ = backend;
  acceptor_ = std::thread([this] { accept_loop(); });
}

void TlsFront::stop() {
  if (listener_ < 0) return;
  stop_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_, &one, sizeof one);
  if (acceptor_.joinable()) acceptor_.join();
  // Blocked reads and writes (a handshake, a relay) return at once on a shut socket.
  for (Connection& c : connections_) ::shutdown(c.client, SHUT_RDWR);
  for (Connection& c : connections_) c.thread.join();
  for (Connection& c : connections_) ::close(c.client);
  connections_.clear();
  ::close(listener_);
  ::close(wake_);
  listener_ = wake_ = -1;
}

bool TlsFront::admits(const char* address, int port) const {
  if (std::strcmp(address, "127.0.0.1") != 0 || port <= 0 || port > 65535) return false;
  std::lock_guard lock(mutex_);
  return relay_ports_.count(static_cast<uint16_t>(port)) != 0;
}

void TlsFront::reap() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (!it->done) {
      ++it;
      continue;
    }
    it->thread.join();
    ::close(it->client);
    it = connections_.erase(it);
  }
}

void TlsFront::accept_loop() {
  while (!stop_) {
    pollfd fds[2] = {{listener_, POLLIN, 0}, {wake_, POLLIN, 0}};
    if (::poll(fds, 2, 1000) < 0 && errno != EINTR) return;
    reap();
    if ((fds[0].revents & POLLIN) == 0 || stop_) continue;
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;  // the client went, or no descriptor: the next one may fare better
    if (connections_.size() >= max_connections_) {
      ::close(client);  // bounded: a crowd of handshakes cannot take every thread
      continue;
    }
    Connection& c = connections_.emplace_back();
    c.client = client;
    c.thread = std::thread([this, &c] { serve(c); });
  }
}

void TlsFront::serve(Connection& connection) {
  base::set_io_timeout(connection.client, kHandshakeMs);
  base::Ssl tls(SSL_new(context_.get()));
  // The backend only after the handshake: a scanner or a plain HTTP request takes no civetweb thread.
  if (tls && SSL_set_fd(tls.get(), connection.client) == 1 && SSL_accept(tls.get()) == 1) {
    if (const int backend = connect_backend(backend_); backend >= 0) {
      base::set_io_timeout(backend, kHandshakeMs);
      const uint16_t relay_port = local_port(backend);
      {
        std::lock_guard lock(mutex_);
        relay_ports_.insert(relay_port);
      }
      base::tls_relay(tls.get(), backend, stop_);
      {
        std::lock_guard lock(mutex_);
        relay_ports_.erase(relay_port);
      }
      ::close(backend);
    }
  }
  ERR_clear_error();                         // a failed handshake says nothing: a scanner must not flood the log
  ::shutdown(connection.client, SHUT_RDWR);  // the client hears it now; the number is freed when joined
  connection.done = true;
}

}  // namespace mavswitch::daemon
