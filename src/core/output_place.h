// Where an output file may be written, found the way a program run as root
// on a shared machine must find it: no link that someone else could have
// planted is followed.
//
// `discover -o`, `--failed-hosts`, `show -o` and the rest run as root in
// prologs and cron jobs, often into folders other users can write. Before,
// the path was realpath()ed and the file renamed over whatever the links
// named: a user who owned DIR and made DIR/out.json a link to /etc/shadow
// had root replace /etc/shadow (and make it world-readable). Now the path
// is walked one name at a time from an open folder (openat, O_NOFOLLOW), so
// what is checked is what is used, and a symbolic link anywhere on it is
// followed only when nobody but root and the caller could have made it:
//
//   - the link is owned by root or the caller, and
//   - the folder holding it is owned by root or the caller and writable by
//     no one else, or it is sticky (/tmp), where others cannot replace it.
//
// That is the rule of fs.protected_symlinks for sticky folders, applied to
// every folder on the path. /etc/slurm/topology.conf -> /shared/... keeps
// working where root owns the chain; /dev/stdout -> /proc/self/fd/1 -> a
// pipe does too. A link to nothing is never followed to create a file (the
// link's owner would choose where root writes). What is not a regular file
// is written in place only when it is a character device (/dev/null, a
// terminal) or a FIFO; anything else (a block device, a socket) is refused.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>

#include "topolaunch/result.h"

namespace topolaunch {

/// An output file's place: the open folder that holds it and its name there.
/// Owns `folder` (closed by the destructor).
struct OutputPlace {
  enum class Kind {
    kNew,      ///< nothing there yet: created beside, renamed in
    kReplace,  ///< a regular file: replaced whole, its mode and owner kept
    kInPlace,  ///< a character device or FIFO: written in place
  };
  int folder = -1;       ///< O_PATH descriptor of the folder
  std::string name;      ///< the name in `folder`
  std::string path;      ///< the path as given, for messages
  Kind kind = Kind::kNew;
  struct stat existing {};  ///< kReplace, kInPlace: what is there
  bool through_link = false;  ///< kInPlace: `name` is a trusted link to it (open following it)

  OutputPlace() = default;
  OutputPlace(OutputPlace&& other) noexcept;
  OutputPlace& operator=(OutputPlace&& other) noexcept;
  ~OutputPlace();
};

/// Walks `path` as the file comment says, for a process whose effective
/// user is `caller`. Errors: kBadInput for a link not followed (naming the
/// link and its owner), a link to nothing, or a kind of file that is never
/// written (a folder, a block device, a socket); kUnavailable naming the
/// path and the OS reason for the rest (a missing folder, permissions).
Result<OutputPlace> FindOutputPlace(const std::string& path, uid_t caller);

}  // namespace topolaunch
