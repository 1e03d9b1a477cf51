// known_hosts text: the key types it holds for a host decide what `run`
// asks the server for.
#include "fuzz/fuzz_check.h"
#include "launch/ssh_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  std::string_view text = fuzz::AsText(data, size);
  (void)KnownHostKeyTypes(text, "node017", 22);
  (void)KnownHostKeyTypes(text, "10.0.0.7", 2222);
  return 0;
}
