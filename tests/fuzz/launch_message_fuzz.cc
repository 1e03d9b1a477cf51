// The agent's launch message crosses the network: whatever it accepts must
// write back to the same message (arguments byte for byte).
#include "fuzz/fuzz_check.h"
#include "launch/launch_message.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  Result<LaunchMessage> message = ParseLaunchMessage(fuzz::AsText(data, size));
  if (!message.ok()) {
    fuzz::Check(!message.error().problems.empty(), "an error names at least one problem");
    return 0;
  }
  Result<LaunchMessage> back = ParseLaunchMessage(FormatLaunchMessage(*message));
  fuzz::Check(back.ok(), "what was accepted writes back readable");
  if (back.ok()) fuzz::Check(*back == *message, "launch message round trip is exact");
  return 0;
}
