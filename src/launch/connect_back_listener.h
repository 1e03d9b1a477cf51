// Where agents connect back to (connect_back.h): a fresh secret, a TCP port
// listening on every address of this machine, and those addresses in the
// order a node most likely reaches them; or a port on one address given,
// pinned. Used by connect_back_hub.cc.
#pragma once

#include <optional>
#include <string>

#include "launch/connect_back.h"
#include "launch/srun_port_range.h"
#include "topolaunch/result.h"

namespace topolaunch {

struct ConnectBackListener {
  int fd = -1;  ///< listening, non-blocking, close-on-exec; the caller closes it
  ConnectBack where;
};

/// Where to listen.
struct ListenOn {
  std::string address;              ///< the one to listen on and advertise, pinned; empty for all
  std::optional<PortRange> ports;   ///< slurm.conf's SrunPortRange; none: any free port
};

/// Errors: kUnavailable (no random bytes, no socket, no free port in the
/// range, naming it), kBadInput (the address is not a numeric address of
/// this machine).
Result<ConnectBackListener> OpenConnectBackListener(const ListenOn& on);

}  // namespace topolaunch
