// The window's second: HttpServer::Hooks::tick, once a second on the window's thread, on a
// libwebsockets timer (what the window keeps a history of).
#include "base/fault.hpp"
#include "router/router.hpp"
#include "window/http_window.hpp"

#include <malloc.h>

#include <algorithm>

namespace mavswitch::window {

void HttpServer::Window::on_second(lws_sorted_usec_list_t* sul) {
  Window* w = reinterpret_cast<Second*>(sul)->window;  // sul is its first member
  w->recheck_streamed();
  w->trim_after_leaving();
  try {
    w->hooks.tick();
  } catch (const Router::Stopped&) {
    return;  // the router is going: no more seconds
  } catch (...) {
    fault::caught("the window's second");
  }
  lws_sul_schedule(w->context, 0, &w->second.sul, on_second, LWS_US_PER_SEC);
}

// Many clients gone (a thousand WebSocket ground stations leaving): their memory goes back to the
// system, here and on the workers that held their links (malloc_trim trims every arena). Twice,
// a second apart: the links go on their workers' threads a moment after the sessions here.
void HttpServer::Window::trim_after_leaving() {
  constexpr size_t kLeavers = 64;  // fewer leave no mark worth a trim
  if (sessions.size() + kLeavers <= most_sessions) {
    most_sessions = sessions.size();
    trims_due = 2;
  }
  most_sessions = std::max(most_sessions, sessions.size());
  if (trims_due > 0 && --trims_due >= 0) malloc_trim(0);
}

}  // namespace mavswitch::window
