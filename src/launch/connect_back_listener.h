// Where agents connect back to (connect_back.h): a fresh secret, a TCP port
// listening on every address of this machine, and those addresses in the
// order a node most likely reaches them; or a port on one address given,
// pinned. Used by connect_back_hub.cc.
#pragma once

#include <string>

#include "launch/connect_back.h"
#include "topolaunch/result.h"

namespace topolaunch {

struct ConnectBackListener {
  int fd = -1;  ///< listening, non-blocking, close-on-exec; the caller closes it
  ConnectBack where;
};

/// `address`: the one to listen on and advertise, pinned; empty for all.
/// Errors: kUnavailable (no random bytes, no socket), kBadInput (`address`
/// is not a numeric address of this machine).
Result<ConnectBackListener> OpenConnectBackListener(const std::string& address);

}  // namespace topolaunch
