// Writing output files so that readers never see half of one.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "core/output_place.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// Writes `contents` to a temporary file beside `path`, fsyncs it and renames
/// it over `path`. On any error the temporary file is removed and `path` is
/// untouched; the error (kUnavailable) names `path` and the OS reason.
/// `path` is found as core/output_place.h says: a symlink is followed only
/// where nobody but root and the caller could have made it (then its target
/// is replaced and the link stays), never to create a file; a file replaced
/// keeps its mode and owner; a character device or FIFO (/dev/null,
/// /dev/stdout to a pipe) is written in place, never replaced. A refused
/// path is kBadInput naming the link and its owner.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

/// The same, for a document made in pieces: each piece is written by a
/// thread of the stream's own while the caller makes the next, and `path`
/// appears, whole, only on Commit. Destroyed without a successful Commit (an
/// error, an early return) it removes its temporary file and leaves `path`
/// as it was.
///
///   auto stream = AtomicFileStream::Open("topology.json");
///   stream->Append(piece); ...
///   Status done = stream->Commit();
class AtomicFileStream {
 public:
  static Result<std::unique_ptr<AtomicFileStream>> Open(const std::string& path);
  ~AtomicFileStream();
  AtomicFileStream(const AtomicFileStream&) = delete;
  AtomicFileStream& operator=(const AtomicFileStream&) = delete;

  /// Queues a piece; a write error is kept and reported by Commit.
  void Append(std::string piece);
  /// Waits for every piece, fsyncs, renames over the path. Once only.
  Status Commit();

 private:
  AtomicFileStream(OutputPlace place, std::string temp, int fd);
  void WritePieces();
  // Ends the writer thread after the pieces queued so far.
  void Finish();

  OutputPlace place_;
  std::string temp_;  // the temporary file's name in place_.folder; "" when written in place
  int fd_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> pieces_;
  bool closing_ = false;
  int error_ = 0;  // errno of the first failed write
  bool committed_ = false;
  std::thread writer_;
};

}  // namespace topolaunch
