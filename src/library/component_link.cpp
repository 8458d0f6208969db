#include "library/component_link.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "library/component.hpp"
#include "protocol/parser.hpp"

namespace mavswitch::library_detail {
namespace {

class ComponentEndpoint final : public transport::Endpoint {
 public:
  ComponentEndpoint(transport::EndpointSpec spec, transport::LinkHost& host, std::shared_ptr<ComponentCore> core)
      : Endpoint(std::move(spec), host), core_(std::move(core)) {}
  ~ComponentEndpoint() override {
    if (link_) core_->link_down();
  }

  void start() override {
    MAVSWITCH_ASSERT_OWNER(host_.loop(), "ComponentEndpoint::start");
    link_ = std::make_unique<ComponentLink>(*this, host_, *core_);
    host_.link_up(*link_);
    core_->link_up(*link_);
  }
  void for_each_link(const std::function<void(const transport::Link&)>& f) const override {
    if (link_) f(*link_);
  }
  std::string describe() const override { return fmt::format("component {}/{}", core_->sysid, core_->compid); }

 private:
  const std::shared_ptr<ComponentCore> core_;
  std::unique_ptr<ComponentLink> link_;
};

class ComponentMaker final : public transport::EndpointMaker {
 public:
  explicit ComponentMaker(std::weak_ptr<ComponentCore> core) : core_(std::move(core)) {}
  const char* kind() const noexcept override { return "component"; }
  std::string where(const transport::EndpointSpec&) const override { return {}; }  // its endpoint says who it is
  std::unique_ptr<transport::Endpoint> make(transport::EndpointSpec spec, transport::LinkHost& host) const override {
    auto core = core_.lock();
    if (!core) throw std::runtime_error("the component is gone");
    return std::make_unique<ComponentEndpoint>(std::move(spec), host, std::move(core));
  }

 private:
  const std::weak_ptr<ComponentCore> core_;
};

}  // namespace

ComponentLink::ComponentLink(transport::Endpoint& endpoint, transport::LinkHost& host, ComponentCore& core)
    : Link(endpoint, host, "in-process"), core_(core) {
  flush_pending = true;  // nothing ever waits to be written: never listed for a flush
  path_ = Path::kInProcess;
  take_views();
}

bool ComponentLink::take(const protocol::FrameView& frame, std::span<const uint8_t> bytes) {
  // The view routing decided on; `bytes` differ only when the link signs, which components do
  // not (their frames are the program's own).
  core_.dispatch(frame);
  ++counters_.frames_out;
  counters_.bytes_out += bytes.size();
  return true;
}

bool ComponentLink::enqueue(std::span<const uint8_t> frame) {
  return take(protocol::view_checked(host_.message_table(), frame), frame);
}

std::shared_ptr<const transport::EndpointMaker> component_maker(std::weak_ptr<ComponentCore> core) {
  return std::make_shared<ComponentMaker>(std::move(core));
}

}  // namespace mavswitch::library_detail
