// The window's second: HttpServer::Hooks::tick, once a second on the window's thread, on a
// libwebsockets timer (what the window keeps a history of).
#include "base/fault.hpp"
#include "router/router.hpp"
#include "window/http_window.hpp"

namespace mavswitch::daemon {

void HttpServer::Window::on_second(lws_sorted_usec_list_t* sul) {
  Window* w = reinterpret_cast<Second*>(sul)->window;  // sul is its first member
  w->recheck_streamed();
  try {
    w->hooks.tick();
  } catch (const Router::Stopped&) {
    return;  // the router is going: no more seconds
  } catch (...) {
    fault::caught("the window's second");
  }
  lws_sul_schedule(w->context, 0, &w->second.sul, on_second, LWS_US_PER_SEC);
}

}  // namespace mavswitch::daemon
