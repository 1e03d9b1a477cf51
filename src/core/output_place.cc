#include "core/output_place.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <pwd.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <utility>

#include <fmt/format.h>

namespace topolaunch {

OutputPlace::OutputPlace(OutputPlace&& other) noexcept { *this = std::move(other); }

OutputPlace& OutputPlace::operator=(OutputPlace&& other) noexcept {
  if (this == &other) return *this;
  if (folder >= 0) close(folder);
  folder = std::exchange(other.folder, -1);
  name = std::move(other.name);
  path = std::move(other.path);
  kind = other.kind;
  existing = other.existing;
  through_link = other.through_link;
  return *this;
}

OutputPlace::~OutputPlace() {
  if (folder >= 0) close(folder);
}

namespace {

constexpr int kMaxLinks = 40;  // the kernel's own limit (ELOOP)

Error Unavailable(const std::string& path, std::string_view what, int err) {
  return Error(ErrorCode::kUnavailable, path, fmt::format("{}: {}", what, std::strerror(err)));
}

std::string UserName(uid_t uid) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[1024];
  if (getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found) return fmt::format("{} (uid {})", found->pw_name, uid);
  return fmt::format("uid {}", uid);
}

// The names of `path` in order; an absolute path starts over at "/".
std::deque<std::string> Names(std::string_view path) {
  std::deque<std::string> names;
  size_t i = 0;
  while (i < path.size()) {
    size_t end = path.find('/', i);
    if (end == std::string_view::npos) end = path.size();
    if (end > i && path.substr(i, end - i) != ".") names.emplace_back(path.substr(i, end - i));
    i = end + 1;
  }
  return names;
}

// Why a link (`link`, its lstat) in the folder `folder` may not be
// followed; "" when it may (the file comment's rule).
std::string WhyNotFollowed(int folder, const struct stat& link, uid_t caller) {
  auto trusted = [caller](uid_t uid) { return uid == 0 || uid == caller; };
  if (!trusted(link.st_uid)) return fmt::format("a symbolic link owned by {}", UserName(link.st_uid));
  struct stat holder {};
  if (fstat(folder, &holder) != 0) return fmt::format("its folder cannot be looked at ({})", std::strerror(errno));
  if (holder.st_mode & S_ISVTX) return "";  // sticky: only its owner (trusted) or root can replace it
  if (!trusted(holder.st_uid)) return fmt::format("a symbolic link in a folder owned by {}", UserName(holder.st_uid));
  if (holder.st_mode & (S_IWGRP | S_IWOTH)) return "a symbolic link in a folder that others can write";
  return "";
}

class Walk {
 public:
  Walk(std::string path, uid_t caller) : path_(std::move(path)), caller_(caller) {}
  ~Walk() {
    if (folder_ >= 0) close(folder_);
  }
  Result<OutputPlace> Run();

 private:
  Status Start(std::string_view from);
  Status EnterFolder(const std::string& name);
  Status FollowLink(const std::string& name, const struct stat& link, bool last);
  Result<OutputPlace> ThroughProcLink(const std::string& name);
  Result<OutputPlace> Place(const std::string& name, OutputPlace::Kind kind, const struct stat* existing);
  Error Refused(const std::string& what) const {
    return Error(ErrorCode::kBadInput, path_, what);
  }

  std::string path_;
  uid_t caller_;
  int folder_ = -1;
  std::string shown_;            // the walk so far, for messages: "/srv/out"
  std::deque<std::string> names_;
  int links_ = 0;
  bool last_came_from_link_ = false;  // the final name is a link's target
  std::string last_link_;             // that link, as shown
  bool proc_link_ = false;            // the final link is /proc's, to an open file (FollowLink)
};

bool OnProc(int folder) {
  struct statfs fs {};
  return fstatfs(folder, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

Status Walk::Start(std::string_view from) {
  int fd = open(from.starts_with('/') ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Unavailable(path_, "cannot open its folder", errno);
  if (folder_ >= 0) close(folder_);
  folder_ = fd;
  shown_ = from.starts_with('/') ? "" : ".";
  return Ok{};
}

Status Walk::EnterFolder(const std::string& name) {
  int fd = openat(folder_, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Unavailable(path_, fmt::format("cannot open {}/{}", shown_, name), errno);
  close(folder_);
  folder_ = fd;
  shown_ += "/" + name;
  return Ok{};
}

Status Walk::FollowLink(const std::string& name, const struct stat& link, bool last) {
  std::string shown = shown_ + "/" + name;
  if (std::string why = WhyNotFollowed(folder_, link, caller_); !why.empty())
    return Refused(fmt::format("{} is {}: not followed (anyone who can change it would choose where this writes; write "
                               "to the target's own path, or have root or yourself own the link and its folder)",
                               shown, why));
  if (++links_ > kMaxLinks) return Unavailable(path_, "cannot follow its links", ELOOP);
  // /proc's links give a size smaller than their target: room for any path.
  std::string target(std::max<size_t>(static_cast<size_t>(std::max<off_t>(link.st_size, 0)), 4096) + 1, '\0');
  ssize_t n = readlinkat(folder_, name.c_str(), target.data(), target.size());
  if (n < 0) return Unavailable(path_, fmt::format("cannot read the link {}", shown), errno);
  if (static_cast<size_t>(n) == target.size()) return Unavailable(path_, fmt::format("cannot read the link {}", shown), ENAMETOOLONG);
  target.resize(static_cast<size_t>(n));
  // /proc/self/fd/1 (where /dev/stdout leads) names an open file: a path
  // when it has one, else "pipe:[123]", "socket:[456]": opened through it.
  if (last && !target.starts_with('/') && OnProc(folder_)) {
    proc_link_ = true;
    return Ok{};
  }
  if (target.starts_with('/'))
    if (Status started = Start(target); !started.ok()) return started;
  std::deque<std::string> names = Names(target);
  names_.insert(names_.begin(), names.begin(), names.end());
  if (last) {
    last_came_from_link_ = true;
    last_link_ = shown;
  }
  return Ok{};
}

Result<OutputPlace> Walk::Place(const std::string& name, OutputPlace::Kind kind, const struct stat* existing) {
  OutputPlace place;
  place.folder = std::exchange(folder_, -1);
  place.name = name;
  place.path = path_;
  place.kind = kind;
  if (existing) place.existing = *existing;
  return place;
}

Result<OutputPlace> Walk::ThroughProcLink(const std::string& name) {
  struct stat st {};
  if (fstatat(folder_, name.c_str(), &st, 0) != 0)
    return Unavailable(path_, fmt::format("cannot look at what {}/{} names", shown_, name), errno);
  if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
    return Refused(fmt::format("{}/{} names an open file that is neither a character device nor a FIFO", shown_, name));
  Result<OutputPlace> place = Place(name, OutputPlace::Kind::kInPlace, &st);
  if (place.ok()) place->through_link = true;
  return place;
}

Result<OutputPlace> Walk::Run() {
  if (path_.empty()) return Error(ErrorCode::kBadInput, "output", "empty path");
  if (Status started = Start(path_); !started.ok()) return started.take_error();
  names_ = Names(path_);
  if (names_.empty()) return Unavailable(path_, "cannot write", EISDIR);
  while (!names_.empty()) {
    std::string name = std::move(names_.front());
    names_.pop_front();
    bool last = names_.empty();
    struct stat st {};
    if (fstatat(folder_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      int err = errno;
      if (err != ENOENT || !last) return Unavailable(path_, fmt::format("cannot look at {}/{}", shown_, name), err);
      if (last_came_from_link_)
        return Refused(fmt::format("{} is a symbolic link to nothing ({}/{}): not followed to create a file there; "
                                   "remove the link or write to its target's path",
                                   last_link_, shown_, name));
      return Place(name, OutputPlace::Kind::kNew, nullptr);
    }
    if (S_ISLNK(st.st_mode)) {
      if (Status followed = FollowLink(name, st, last); !followed.ok()) return followed.take_error();
      if (proc_link_) return ThroughProcLink(name);
      continue;
    }
    if (!last) {
      if (Status entered = EnterFolder(name); !entered.ok()) return entered.take_error();
      continue;
    }
    if (S_ISREG(st.st_mode)) return Place(name, OutputPlace::Kind::kReplace, &st);
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return Place(name, OutputPlace::Kind::kInPlace, &st);
    if (S_ISDIR(st.st_mode)) return Unavailable(path_, "cannot write", EISDIR);
    return Refused(fmt::format("{}/{} is {}: only regular files, character devices and FIFOs are written", shown_, name,
                               S_ISBLK(st.st_mode) ? "a block device" : "a socket"));
  }
  return Unavailable(path_, "cannot write", EISDIR);  // the names ran out on a folder ("dir/..")
}

}  // namespace

Result<OutputPlace> FindOutputPlace(const std::string& path, uid_t caller) { return Walk(path, caller).Run(); }

}  // namespace topolaunch
