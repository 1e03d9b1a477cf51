// known_hosts text: the key types it holds for a host decide what `run`
// asks the server for, and the whole file is read before libssh2 sees it
// (entries, @revoked and @cert-authority lines, their host patterns).
#include "fuzz/fuzz_check.h"
#include "launch/known_hosts.h"
#include "launch/ssh_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  std::string_view text = fuzz::AsText(data, size);
  (void)KnownHostKeyTypes(text, "node017", 22);
  (void)KnownHostKeyTypes(text, "10.0.0.7", 2222);
  Result<KnownHostsFile> file = ParseKnownHosts(text, "known_hosts");
  if (file.ok())
    for (const std::vector<KnownHostsEntry>* entries : {&file->plain, &file->revoked, &file->authorities})
      for (const KnownHostsEntry& entry : *entries) {
        (void)HostMatchesPatterns(entry.patterns, "node017", 22);
        (void)HostMatchesPatterns(entry.patterns, "10.0.0.7", 2222);
        (void)Base64(entry.key_base64);
      }
  return 0;
}
