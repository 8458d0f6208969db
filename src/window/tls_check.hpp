// The [Http] Certificate file, checked before libwebsockets takes it.
#pragma once

#include <string>

namespace mavswitch::window {

// The certificate chain and key are checked here, read by the bounded reader (a FIFO or a
// device named by mistake is an error at start, never a hang), so that a bad file gets a
// clear error; libwebsockets then loads the same file. Throws std::runtime_error.
void check_certificate(const std::string& pem);

}  // namespace mavswitch::window
