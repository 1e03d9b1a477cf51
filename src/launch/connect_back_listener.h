// Where agents connect back to (connect_back.h): a fresh token, a TCP port
// listening on every address of this machine, and those addresses in the
// order a node most likely reaches them. Used by connect_back_hub.cc.
#pragma once

#include "launch/connect_back.h"
#include "topolaunch/result.h"

namespace topolaunch {

struct ConnectBackListener {
  int fd = -1;  ///< listening, non-blocking, close-on-exec; the caller closes it
  ConnectBack where;
};

/// Errors: kUnavailable (no random bytes, no socket).
Result<ConnectBackListener> OpenConnectBackListener();

}  // namespace topolaunch
