#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace topolaunch {

namespace {

Error Failed(const std::string& path, const char* what, int err) {
  return Error(ErrorCode::kUnavailable, path, std::string(what) + ": " + std::strerror(err));
}

// The errno of a failed write, 0 when all of `bytes` went out.
int WriteAll(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// Where output for `path` goes. A regular file (or none yet) is replaced by
// rename. Renaming over anything else would replace the thing itself: as
// root, `-o /dev/null` turned /dev/null into a regular file for the whole
// machine, and a symlink (/etc/slurm/topology.conf pointing at a shared
// copy) became a file of its own. So a symlink to a regular file is
// followed and its target replaced; a device, a pipe or a socket, or a
// link that points nowhere yet, is written in place.
struct OutputTarget {
  std::string path;
  bool in_place = false;
};

Result<OutputTarget> ResolveOutput(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return OutputTarget{path};
    return Failed(path, "cannot look at it", errno);
  }
  if (S_ISLNK(st.st_mode)) {
    if (stat(path.c_str(), &st) != 0) return OutputTarget{path, true};  // dangling: created through the link
    if (S_ISREG(st.st_mode)) {
      char* real = realpath(path.c_str(), nullptr);
      if (!real) return Failed(path, "cannot follow the link", errno);
      OutputTarget target{real};
      std::free(real);
      return target;
    }
  }
  if (S_ISDIR(st.st_mode)) return Failed(path, "cannot write", EISDIR);
  return OutputTarget{path, !S_ISREG(st.st_mode)};
}

// The file to write: the target itself when it is written in place (`temp`
// left empty), else a temporary file beside it (mkstemp: a fresh name, 0600).
Result<int> OpenOutput(const OutputTarget& target, std::string& temp) {
  if (target.in_place) {
    int fd = open(target.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Failed(target.path, "cannot open", errno);
    return fd;
  }
  temp = target.path + ".tmp.XXXXXX";
  int fd = mkstemp(temp.data());
  if (fd < 0) return Failed(target.path, "cannot create a temporary file beside it", errno);
  return fd;
}

// Flushes, closes and renames the written temporary file over `path`; on
// failure removes it. Without a temporary file (written in place) it only
// closes. Closes `fd` in every case.
Status Publish(const std::string& path, const std::string& temp, int fd) {
  if (temp.empty()) return close(fd) == 0 ? Status(Ok{}) : Failed(path, "cannot write", errno);
  // mkstemp creates 0600; output files are ordinary data files.
  fchmod(fd, 0644);
  if (fsync(fd) != 0 || close(fd) != 0) {
    int err = errno;
    unlink(temp.c_str());
    return Failed(path, "cannot flush", err);
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(temp.c_str());
    return Failed(path, "cannot rename the temporary file over it", err);
  }
  return Ok{};
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  Result<OutputTarget> target = ResolveOutput(path);
  if (!target.ok()) return target.take_error();
  std::string temp;
  Result<int> fd = OpenOutput(*target, temp);
  if (!fd.ok()) return fd.take_error();
  if (int err = WriteAll(*fd, contents)) {
    close(*fd);
    if (!temp.empty()) unlink(temp.c_str());
    return Failed(path, "cannot write", err);
  }
  return Publish(target->path, temp, *fd);
}

Result<std::unique_ptr<AtomicFileStream>> AtomicFileStream::Open(const std::string& path) {
  Result<OutputTarget> target = ResolveOutput(path);
  if (!target.ok()) return target.take_error();
  std::string temp;
  Result<int> fd = OpenOutput(*target, temp);
  if (!fd.ok()) return fd.take_error();
  return std::unique_ptr<AtomicFileStream>(new AtomicFileStream(target->path, std::move(temp), *fd));
}

AtomicFileStream::AtomicFileStream(std::string path, std::string temp, int fd)
    : path_(std::move(path)), temp_(std::move(temp)), fd_(fd), writer_([this] { WritePieces(); }) {}

AtomicFileStream::~AtomicFileStream() {
  Finish();
  if (!committed_) {
    close(fd_);
    if (!temp_.empty()) unlink(temp_.c_str());
  }
}

void AtomicFileStream::Append(std::string piece) {
  std::lock_guard lock(mutex_);
  pieces_.push_back(std::move(piece));
  changed_.notify_one();
}

void AtomicFileStream::WritePieces() {
  off_t written = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return closing_ || !pieces_.empty(); });
    if (pieces_.empty()) return;  // closing, and nothing left
    std::string piece = std::move(pieces_.front());
    pieces_.pop_front();
    if (error_) continue;  // after a failed write the rest is dropped
    lock.unlock();
    int err = WriteAll(fd_, piece);
    // Starts the disk write of this piece now, so the fsync in Commit waits
    // for the last piece rather than the whole file. Advisory: its errors
    // come back from that fsync.
    if (!err && !temp_.empty()) sync_file_range(fd_, written, static_cast<off_t>(piece.size()), SYNC_FILE_RANGE_WRITE);
    written += static_cast<off_t>(piece.size());
    lock.lock();
    if (err) error_ = err;
  }
}

void AtomicFileStream::Finish() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
    changed_.notify_one();
  }
  if (writer_.joinable()) writer_.join();
}

Status AtomicFileStream::Commit() {
  Finish();
  if (committed_) return Error(ErrorCode::kUnavailable, path_, "committed twice");
  if (error_) return Failed(path_, "cannot write", error_);
  committed_ = true;  // Publish closes the file and cleans up after itself
  return Publish(path_, temp_, fd_);
}

}  // namespace topolaunch
