#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace topolaunch {

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  auto fail = [&](const char* what, int err) {
    return Error(ErrorCode::kUnavailable, path, std::string(what) + ": " + std::strerror(err));
  };
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return fail("cannot create a temporary file beside it", errno);
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return fail("cannot write", err);
    }
    done += static_cast<size_t>(n);
  }
  // mkstemp creates 0600; output files are ordinary data files.
  fchmod(fd, 0644);
  if (fsync(fd) != 0 || close(fd) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return fail("cannot flush", err);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return fail("cannot rename the temporary file over it", err);
  }
  return Ok{};
}

}  // namespace topolaunch
