#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
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

// A fresh temporary name beside the output: NAME.tmp.XXXXXX.
std::string TemporaryName(const std::string& name) {
  static constexpr std::string_view kLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device random;
  std::string temp = name + ".tmp.";
  for (int i = 0; i < 6; ++i) temp += kLetters[random() % kLetters.size()];
  return temp;
}

// The file to write: the thing itself when it is written in place (`temp`
// left empty), else a temporary file beside it (a fresh name, 0600, made in
// the folder the walk holds open, so nobody can move it elsewhere).
Result<int> OpenOutput(const OutputPlace& place, std::string& temp) {
  if (place.kind == OutputPlace::Kind::kInPlace) {
    int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | (place.through_link ? 0 : O_NOFOLLOW);
    int fd = openat(place.folder, place.name.c_str(), flags);
    if (fd < 0) return Failed(place.path, "cannot open", errno);
    struct stat st {};
    if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
      close(fd);
      return Error(ErrorCode::kBadInput, place.path, "changed while it was opened: no longer a character device or FIFO");
    }
    return fd;
  }
  for (int tries = 0; tries < 100; ++tries) {
    temp = TemporaryName(place.name);
    int fd = openat(place.folder, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    if (errno != EEXIST) break;
  }
  int err = errno;
  temp.clear();
  return Failed(place.path, "cannot create a temporary file beside it", err);
}

// A new file is an ordinary data file (0644); a replaced one keeps its
// permissions and, where this process may set it (root, or its own file),
// its owner and group: a root cron job rewriting a user's file leaves it
// theirs.
Status TakeOverMode(const OutputPlace& place, int fd) {
  if (place.kind != OutputPlace::Kind::kReplace) {
    fchmod(fd, 0644);
    return Ok{};
  }
  const struct stat& old = place.existing;
  if (old.st_uid != geteuid() || old.st_gid != getegid())
    if (fchown(fd, old.st_uid, old.st_gid) != 0 && geteuid() == 0) return Failed(place.path, "cannot keep its owner", errno);
  if (fchmod(fd, old.st_mode & 0777) != 0) return Failed(place.path, "cannot keep its mode", errno);
  return Ok{};
}

// Flushes, closes and renames the written temporary file over the place; on
// failure removes it. Without a temporary file (written in place) it only
// closes. Closes `fd` in every case.
Status Publish(const OutputPlace& place, const std::string& temp, int fd) {
  if (temp.empty()) return close(fd) == 0 ? Status(Ok{}) : Failed(place.path, "cannot write", errno);
  Status kept = TakeOverMode(place, fd);
  int err = 0;
  if (!kept.ok()) {
    close(fd);
  } else if (fsync(fd) != 0) {
    err = errno;
    close(fd);
  } else if (close(fd) != 0) {
    err = errno;
  }
  if (!kept.ok() || err) {
    unlinkat(place.folder, temp.c_str(), 0);
    return kept.ok() ? Failed(place.path, "cannot flush", err) : kept;
  }
  if (renameat(place.folder, temp.c_str(), place.folder, place.name.c_str()) != 0) {
    int err = errno;
    unlinkat(place.folder, temp.c_str(), 0);
    return Failed(place.path, "cannot rename the temporary file over it", err);
  }
  return Ok{};
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  Result<OutputPlace> place = FindOutputPlace(path, geteuid());
  if (!place.ok()) return place.take_error();
  std::string temp;
  Result<int> fd = OpenOutput(*place, temp);
  if (!fd.ok()) return fd.take_error();
  if (int err = WriteAll(*fd, contents)) {
    close(*fd);
    if (!temp.empty()) unlinkat(place->folder, temp.c_str(), 0);
    return Failed(path, "cannot write", err);
  }
  return Publish(*place, temp, *fd);
}

Result<std::unique_ptr<AtomicFileStream>> AtomicFileStream::Open(const std::string& path) {
  Result<OutputPlace> place = FindOutputPlace(path, geteuid());
  if (!place.ok()) return place.take_error();
  std::string temp;
  Result<int> fd = OpenOutput(*place, temp);
  if (!fd.ok()) return fd.take_error();
  return std::unique_ptr<AtomicFileStream>(new AtomicFileStream(std::move(place).value(), std::move(temp), *fd));
}

AtomicFileStream::AtomicFileStream(OutputPlace place, std::string temp, int fd)
    : place_(std::move(place)), temp_(std::move(temp)), fd_(fd), writer_([this] { WritePieces(); }) {}

AtomicFileStream::~AtomicFileStream() {
  Finish();
  if (!committed_) {
    close(fd_);
    if (!temp_.empty()) unlinkat(place_.folder, temp_.c_str(), 0);
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
  if (committed_) return Error(ErrorCode::kUnavailable, place_.path, "committed twice");
  if (error_) return Failed(place_.path, "cannot write", error_);
  committed_ = true;  // Publish closes the file and cleans up after itself
  return Publish(place_, temp_, fd_);
}

}  // namespace topolaunch
