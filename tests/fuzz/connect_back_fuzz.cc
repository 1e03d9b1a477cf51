// What crosses the network when agents connect back (connect_back.h): the
// line every agent reads from the step's stdin, the hello any program that
// reaches `run`'s port may send, the greeting, and the agents' frames.
#include <string>

#include "fuzz/fuzz_check.h"
#include "launch/connect_back.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  std::string_view text = fuzz::AsText(data, size);
  const std::string token(64, 'a');
  if (std::optional<ConnectBack> where = ParseConnectBack(text)) {
    fuzz::Check(where->port > 0 && where->port < 65536 && where->token.size() == 64 && !where->addresses.empty(),
                "an accepted line has a port, a whole token and an address");
    std::string back = FormatConnectBack(*where);
    fuzz::Check(ParseConnectBack(std::string_view(back).substr(0, back.size() - 1)) == where, "the line round-trips");
  }
  ConnectHello hello;
  if (ParseConnectHello(text, token, hello)) {
    fuzz::Check(hello.token == token && hello.task >= 0 && !hello.host.empty(), "an accepted hello names a task and a host");
    std::string back = FormatConnectHello(hello);
    ConnectHello again;
    fuzz::Check(ParseConnectHello(std::string_view(back).substr(0, back.size() - 1), token, again) && again == hello,
                "the hello round-trips");
  }
  fuzz::Check(!IsRunGreeting(text, "short"), "no greeting proves a malformed token");
  AgentFrame frame = ParseAgentFrame(text);
  if (frame.kind == AgentFrame::Kind::kOutput) {
    std::string back = FormatOutputFrame(frame.stream, frame.text);
    fuzz::Check(back.substr(0, back.size() - 1) == text, "an output frame is its line, whole");
  } else if (frame.kind == AgentFrame::Kind::kExit) {
    fuzz::Check(frame.status >= 0 && frame.status <= 255, "an exit status is a status");
  }
  return 0;
}
