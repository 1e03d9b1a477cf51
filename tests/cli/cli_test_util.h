// Running the built topolaunch binary from tests.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "support/subprocess.h"
#include "support/test_paths.h"
#include "support/model_printers.h"
#include "topolaunch/topology_json.h"

namespace topolaunch::testing {

/// Runs `topolaunch ARGS...` to completion (60 s limit).
inline ProcessResult RunTopolaunch(std::vector<std::string> args,
                                   std::vector<std::pair<std::string, std::string>> env = {}) {
  ProcessSpec spec;
  spec.argv.push_back(TopolaunchBinary());
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = std::move(env);
  return RunProcess(spec);
}

/// A TCP port on the loopback that was free a moment ago.
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

/// Parses topolaunch's JSON output back into the model (validating it).
inline Result<Topology> ParseOutput(const ProcessResult& result) {
  return ParseTopologyJson(result.out, "<stdout>");
}

}  // namespace topolaunch::testing
