// ~/.ssh/config as `run` reads it, resolved for a host.
#include "fuzz/fuzz_check.h"
#include "launch/ssh_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  Result<SshConfig> config = ParseSshConfig(fuzz::AsText(data, size), "fuzz_config");
  if (!config.ok()) {
    fuzz::Check(!config.error().problems.empty(), "an error names at least one problem");
    return 0;
  }
  (void)ResolveSshHost(*config, "node017", "/home/user", "user");
  return 0;
}
