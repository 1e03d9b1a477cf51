// Where `run` puts the nodes' output: each line on our stdout/stderr
// prefixed with "HOST[NODE_RANK]: ", or with --log-dir one file per node
// (DIR/HOST.log, both streams, created fresh).
//
// Writing never stops the job: a stream that cannot be written (`| head -1`
// closed it, the disk under --log-dir is full) is noted once on stderr and
// its lines are dropped and counted; the run goes on supervised to its end
// and its summary. The printers are called from one thread at a time
// (QueuedLinePrinter's).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "launch/run_session.h"
#include "topolaunch/result.h"

namespace topolaunch::cli {

/// Prefixes each line with its node: `node1[0]: text`, with the text's
/// control characters made visible (TerminalSafe).
class PrefixPrinter : public LinePrinter {
 public:
  explicit PrefixPrinter(std::vector<SessionNode> nodes) : nodes_(std::move(nodes)) {}
  void Line(size_t node, OutputStream stream, std::string_view text) override;
  /// Lines that could not be written, per stream (stdout, stderr).
  uint64_t lost(OutputStream stream) const { return lost_[stream == OutputStream::kStdout ? 0 : 1]; }

 private:
  std::vector<SessionNode> nodes_;
  bool broken_[2] = {false, false};
  uint64_t lost_[2] = {0, 0};
};

/// One file per node under a directory, each line as the node wrote it.
class LogDirPrinter : public LinePrinter {
 public:
  /// Creates `dir` (and parents) and DIR/HOST.log for every node.
  /// Errors: kUnavailable naming the file that could not be created.
  static Result<std::unique_ptr<LogDirPrinter>> Open(const std::string& dir, const std::vector<SessionNode>& nodes);
  ~LogDirPrinter() override;
  void Line(size_t node, OutputStream stream, std::string_view text) override;
  /// Lines that could not be written, over all files.
  uint64_t lost() const { return lost_; }

 private:
  struct File {
    std::string path;
    std::FILE* stream = nullptr;
    bool broken = false;
  };
  std::vector<File> files_;
  uint64_t lost_ = 0;
};

}  // namespace topolaunch::cli
