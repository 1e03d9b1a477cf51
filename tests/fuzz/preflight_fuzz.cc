// Both preflight lines cross the network: the request the agent reads and
// the reply `run` reads (and judges) from every node.
#include "fuzz/fuzz_check.h"
#include "launch/preflight.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  std::string_view text = fuzz::AsText(data, size);
  if (auto request = ParsePreflightRequest(text); !request.ok())
    fuzz::Check(!request.error().problems.empty(), "an error names at least one problem");
  std::string reply_line = std::string(kPreflightReplyPrefix) + std::string(text);
  Result<PreflightReply> reply = ParsePreflightReply(reply_line);
  if (!reply.ok()) {
    fuzz::Check(!reply.error().problems.empty(), "an error names at least one problem");
    return 0;
  }
  PreflightExpectations expect;
  expect.master_host = "node1";
  (void)JudgePreflight("node1", *reply, {reply->unix_time_ms, reply->unix_time_ms}, expect);
  Result<PreflightReply> back = ParsePreflightReply(FormatPreflightReply(*reply));
  fuzz::Check(back.ok(), "the reply we accepted writes back readable");
  return 0;
}
