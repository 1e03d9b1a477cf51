// Where `run` puts the nodes' output. On the terminal each line is
// prefixed with its node, and a rank's line also with its rank, the way
// `srun --label` does: `node1[0]: text` (torchrun's, the agent's) and
// `node1[0] 3: text` (rank 3's). With --log-dir every line goes to files
// instead: DIR/RANK.log for each rank, DIR/HOST.log for each node's own.
// --ranks-output chooses the ranks the terminal shows (with --log-dir, on
// top of the files).
//
// Writing never stops the job: a stream that cannot be written (`| head -1`
// closed it, the disk under --log-dir is full) is noted once on stderr and
// its lines are dropped and counted; the run goes on supervised to its end
// and its summary. The printers are called from one thread at a time
// (QueuedLinePrinter's).
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launch/queued_printer.h"
#include "launch/rank_lines.h"
#include "launch/run_session.h"
#include "topolaunch/result.h"

namespace topolaunch::run {

/// Which lines the terminal shows.
struct TerminalChoice {
  bool node_lines = true;         ///< the nodes' own lines
  bool rank_lines = true;         ///< the ranks' lines (those in `ranks`)
  std::optional<RankSet> ranks;   ///< the ranks whose lines show; nullopt: every rank
};

/// The terminal: `node1[0] 3: text`, the text's control characters made
/// visible (TerminalSafe). A status (the preflight's progress) is drawn on
/// stderr in place when stderr is a terminal, and erased before each line
/// and drawn again after it; elsewhere it is printed as a line.
class PrefixPrinter : public LinePrinter {
 public:
  PrefixPrinter(std::vector<SessionNode> nodes, TerminalChoice choice, std::FILE* out = stdout, std::FILE* err = stderr,
                bool status_in_place = false);
  void Line(const NodeLine& line) override;
  void Status(std::string_view text) override;
  /// Lines that could not be written, per stream (stdout, stderr).
  uint64_t lost(OutputStream stream) const { return lost_[stream == OutputStream::kStdout ? 0 : 1]; }

 private:
  bool Shows(const NodeLine& line) const;
  void EraseStatus();
  void DrawStatus();

  std::vector<SessionNode> nodes_;
  TerminalChoice choice_;
  std::FILE* streams_[2];
  bool status_in_place_;
  std::string status_;    ///< drawn now (in place) or "" for none
  bool broken_[2] = {false, false};
  uint64_t lost_[2] = {0, 0};
};

/// DIR/RANK.log for each rank (made at its first line), DIR/HOST.log for
/// each node's own lines (made at once), each line as it was written.
class LogDirPrinter : public LinePrinter {
 public:
  /// Creates `dir` (and parents) and DIR/HOST.log for every node.
  /// Errors: kUnavailable naming the file that could not be created.
  static Result<std::unique_ptr<LogDirPrinter>> Open(const std::string& dir, const std::vector<SessionNode>& nodes);
  ~LogDirPrinter() override;
  void Line(const NodeLine& line) override;
  /// Lines that could not be written, over all files.
  uint64_t lost() const { return lost_; }

 private:
  struct File {
    std::string path;
    std::FILE* stream = nullptr;
    bool broken = false;
    std::string whose;  ///< for the note when it breaks: "this node's", "rank 3's"
  };
  void Write(File& file, std::string_view text);

  std::string dir_;
  std::vector<File> node_files_;
  std::map<int, File> rank_files_;
  uint64_t lost_ = 0;
};

/// Hands every line and status to each printer in turn.
class TeePrinter : public LinePrinter {
 public:
  explicit TeePrinter(std::vector<LinePrinter*> printers) : printers_(std::move(printers)) {}
  void Line(const NodeLine& line) override {
    for (LinePrinter* printer : printers_) printer->Line(line);
  }
  void Status(std::string_view text) override {
    for (LinePrinter* printer : printers_) printer->Status(text);
  }

 private:
  std::vector<LinePrinter*> printers_;
};

/// The terminal, and with --log-dir the files, as printer().
struct RunOutput {
  std::unique_ptr<PrefixPrinter> terminal;
  std::unique_ptr<LogDirPrinter> files;
  std::unique_ptr<TeePrinter> both;
  std::optional<RankSet> ranks_output;  ///< --ranks-output, parsed
  QueuedLinePrinter* queued = nullptr;  ///< what the session prints through, once made
  LinePrinter& printer() {
    if (both) return *both;
    return *terminal;
  }
};

/// The terminal (a status drawn in place when stderr is one), and with
/// `log_dir` the files; `ranks_output` is --ranks-output. Errors: a bad
/// rank set (kBadUsage), a file that cannot be created (LogDirPrinter::Open).
Result<std::unique_ptr<RunOutput>> OpenRunOutput(const std::string& log_dir, const std::string& ranks_output,
                                                 const std::vector<SessionNode>& nodes);

}  // namespace topolaunch::run
