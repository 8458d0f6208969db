// UDP client: sends to a configured address (broadcast allowed) and takes replies from
// whoever answers. One link.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.hpp"
#include "transport/datagram_reader.hpp"
#include "transport/endpoint_kinds.hpp"
#include "transport/event_loop.hpp"
#include "transport/output_queue.hpp"
#include "transport/resolver.hpp"
#include "transport/socket_util.hpp"

namespace mavswitch::transport {
namespace {

class UdpClientLink final : public Link, private EventLoop::Handler {
 public:
  UdpClientLink(Endpoint& endpoint, LinkHost& host, const SocketAddress& target)
      : Link(endpoint, host, target.to_string()),
        target_(target),
        queue_(endpoint.spec().datagram_queue_frames, endpoint.spec().coalesce, endpoint.spec().gso) {
    fd_ = open_socket(target.family(), SOCK_DGRAM);
    socket_ = std::make_shared<SharedSocket>(fd_);
    enlarge_datagram_buffers(fd_);
    if (target.is_broadcast()) {
      const int one = 1;
      setsockopt(fd_, SOL_SOCKET, SO_BROADCAST, &one, sizeof one);
    }
    // Bind an ephemeral port now, so replies can arrive before we first send.
    const auto any = SocketAddress::numeric(target.family() == AF_INET6 ? "::" : "0.0.0.0", 0);
    bind_socket(fd_, *any, endpoint.describe());
    host_.loop().add(fd_, EPOLLIN, this);
  }
  ~UdpClientLink() override { host_.loop().remove(fd_); }  // closed by its last holder

  std::optional<DirectWrite> direct_write() const override {
    const EndpointSpec& spec = endpoint().spec();
    return DirectWrite{fd_, {}, socket_, target_, spec.datagram_queue_frames, spec.coalesce, spec.gso};
  }

  void flush() override {
    const WriteResult r = queue_.send_to(fd_, &target_, &counters_.frames_out, &counters_.bytes_out);
    const bool blocked = r == WriteResult::kBlocked;
    if (note_write_blocked(blocked)) {  // wait for writable only while blocked
      host_.loop().modify(fd_, EPOLLIN | (blocked ? EPOLLOUT : 0u));
    }
  }
  size_t trim_queues() override { return queue_.trim(); }
  size_t queue_storage() const noexcept override { return queue_.allocated_bytes(); }
  size_t queued_bytes() const noexcept override { return queue_.queued_bytes(); }
  uint64_t kernel_drops() const { return socket_drops(fd_); }

 private:
  bool enqueue(std::span<const uint8_t> frame) override { return queue_.push(frame); }

  void on_io(uint32_t events) override {
    if (events & EPOLLIN) {
      read_datagrams(fd_, host_, [this](std::span<const uint8_t> d, const SocketAddress&) { received_datagram(d); });
    }
    if (events & EPOLLOUT) flush();
  }

  SocketAddress target_;
  DatagramQueue queue_;
  int fd_ = -1;
  std::shared_ptr<const SharedSocket> socket_;
};

class UdpClientEndpoint final : public Endpoint {
 public:
  using Endpoint::Endpoint;
  ~UdpClientEndpoint() override { alive_.reset(); }

  void start() override {
    std::weak_ptr<int> alive = alive_;
    host_.resolver().resolve(spec_.address, spec_.port, SOCK_DGRAM,
                             [this, alive](std::vector<SocketAddress> addrs, std::string error) {
                               if (alive.expired()) return;
                               if (addrs.empty()) {
                                 log::warning("{}: cannot resolve ({}); retrying in 5 s", describe(), error);
                                 host_.loop().after(5000, [this, alive] {
                                   if (!alive.expired()) start();
                                 });
                                 return;
                               }
                               try {
                                 link_ = std::make_unique<UdpClientLink>(*this, host_, addrs[0]);
                               } catch (const std::exception& e) {
                                 log::error("{}: {}", describe(), e.what());
                                 return;
                               }
                               host_.link_up(*link_);
                               log::info("{}: sending to {}", describe(), link_->peer());
                             });
  }

  void for_each_link(const std::function<void(const Link&)>& f) const override {
    if (link_) f(*link_);
  }
  uint64_t kernel_drops() const override { return link_ ? link_->kernel_drops() : 0; }

 private:
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
  std::unique_ptr<UdpClientLink> link_;
};

}  // namespace

std::unique_ptr<Endpoint> make_udp_client_endpoint(EndpointSpec spec, LinkHost& host) {
  return std::make_unique<UdpClientEndpoint>(std::move(spec), host);
}

}  // namespace mavswitch::transport
