// libssh2, opened with dlopen the first time a connection is made.
#include <dlfcn.h>

#include "launch/ssh_session_internal.h"

namespace topolaunch::ssh_internal {

namespace {

constexpr const char* kLibssh2 = "libssh2.so.1";

struct Opened {
  Libssh2 functions;
  std::optional<Error> error;
};

Opened Open() {
  Opened opened;
  // Never closed: sessions may live until the process ends.
  void* library = dlopen(kLibssh2, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    opened.error = Error(ErrorCode::kUnavailable, kLibssh2,
                         fmt::format("cannot load libssh2, which SSH launches need: {} (Debian: apt-get install "
                                     "libssh2-1; inside a Slurm allocation, --launcher srun needs no SSH)",
                                     why ? why : "unknown error"));
    return opened;
  }
  std::string missing;
#define TOPOLAUNCH_LIBSSH2_RESOLVE(name)                                                          \
  opened.functions.name = reinterpret_cast<decltype(opened.functions.name)>(dlsym(library, "libssh2_" #name)); \
  if (!opened.functions.name) missing += missing.empty() ? "libssh2_" #name : ", libssh2_" #name;
  TOPOLAUNCH_LIBSSH2_FUNCTIONS(TOPOLAUNCH_LIBSSH2_RESOLVE)
#undef TOPOLAUNCH_LIBSSH2_RESOLVE
  if (!missing.empty()) {
    opened.error = Error(ErrorCode::kUnavailable, kLibssh2,
                         fmt::format("this libssh2 lacks {} (topolaunch needs libssh2 1.10 or later)", missing));
    return opened;
  }
  if (int rc = opened.functions.init(0); rc != 0)
    opened.error = Error(ErrorCode::kUnavailable, kLibssh2, fmt::format("libssh2_init failed ({})", rc));
  return opened;
}

const Opened& Library() {
  static const Opened opened = Open();
  return opened;
}

}  // namespace

Result<const Libssh2*> OpenLibssh2() {
  const Opened& opened = Library();
  if (opened.error) return *opened.error;
  return &opened.functions;
}

const Libssh2& Ssh2() { return Library().functions; }

}  // namespace topolaunch::ssh_internal
