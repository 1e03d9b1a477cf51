// live_fabric_probe: loads a fabric through the libibnetdisc sources and
// prints it in a canonical line form, for tests that must run the live walk
// in a process started under ibsim-run (its LD_PRELOAD must be in place when
// the process starts).
//
//   live_fabric_probe live [TIMEOUT_MS [CA [PORT]]]
//   live_fabric_probe cache FILE
//
// stdout: one "node ..." line per node and one "port ..." line per port, in
// GUID/port order; on failure a single "error CODE" line (CODE as in
// ErrorCode, e.g. kUnavailable) and the message on stderr. stderr also gets
// "walk_ms N", the time LoadFabric took, and the live source's callbacks as
// "progress NODES" and "still_walking MS" lines.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "discover/ibnetdisc_fabric_source.h"

namespace {

using topolaunch::ErrorCode;

const char* CodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kBadUsage: return "kBadUsage";
    case ErrorCode::kBadInput: return "kBadInput";
    case ErrorCode::kUnavailable: return "kUnavailable";
    case ErrorCode::kTimeout: return "kTimeout";
    case ErrorCode::kInternal: return "kInternal";
  }
  return "?";
}

void PrintFabric(const topolaunch::Fabric& fabric) {
  using topolaunch::FormatGuid;
  fmt::print("source {}\n", fabric.source);
  for (const topolaunch::FabricNode& node : fabric.nodes) {
    fmt::print("node {} {} ports={} sysguid={} desc=\"{}\"\n", FormatGuid(node.guid), topolaunch::NodeTypeName(node.type),
               node.num_ports, FormatGuid(node.system_guid), node.description);
    for (const topolaunch::FabricPort& p : node.ports) {
      std::string remote = p.remote ? fmt::format("{}:{}", FormatGuid(p.remote->node_guid), p.remote->port) : "-";
      fmt::print("port {} {} guid={} lid={} width={} speed={} state={} remote={}\n", FormatGuid(node.guid), p.number,
                 FormatGuid(p.port_guid), p.lid, p.width, p.speed, p.state, remote);
    }
  }
}

// Prints the failure as the header says, then leaves with _Exit: a walk
// still running (past its deadline, on the main thread) or its umad port
// would hang exit() under ibsim-run (see IbnetdiscFabricSource).
[[noreturn]] void Fail(const topolaunch::Error& error) {
  fmt::print("error {}\n", CodeName(error.code));
  fmt::print(stderr, "{}\n", error.Message());
  std::fflush(nullptr);
  std::_Exit(topolaunch::ExitStatusFor(error.code));
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  std::unique_ptr<topolaunch::FabricSource> source;
  if (mode == "live") {
    topolaunch::LiveFabricOptions options;
    if (argc > 2) options.timeout = std::chrono::milliseconds(std::atol(argv[2]));
    if (argc > 3) options.ca = argv[3];
    if (argc > 4) options.port = std::atoi(argv[4]);
    options.progress = [](int nodes) { fmt::print(stderr, "progress {}\n", nodes); };
    options.still_walking = [](std::chrono::milliseconds ms) { fmt::print(stderr, "still_walking {}\n", ms.count()); };
    options.past_deadline = Fail;
    source = std::make_unique<topolaunch::IbnetdiscFabricSource>(options);
  } else if (mode == "cache" && argc > 2) {
    source = std::make_unique<topolaunch::IbnetdiscCacheFabricSource>(argv[2]);
  } else {
    std::fprintf(stderr, "usage: live_fabric_probe live [TIMEOUT_MS [CA [PORT]]] | cache FILE\n");
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  topolaunch::Result<topolaunch::Fabric> fabric = source->LoadFabric();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  fmt::print(stderr, "walk_ms {}\n", ms);
  if (!fabric.ok()) Fail(fabric.error());
  PrintFabric(*fabric);
  return 0;
}
