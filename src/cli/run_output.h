// Where `run` puts the nodes' output: each line on our stdout/stderr
// prefixed with "HOST[NODE_RANK]: ", or with --log-dir one file per node
// (DIR/HOST.log, both streams, created fresh).
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "launch/run_session.h"
#include "topolaunch/result.h"

namespace topolaunch::cli {

/// Prefixes each line with its node: `node1[0]: text`.
class PrefixPrinter : public LinePrinter {
 public:
  explicit PrefixPrinter(std::vector<SessionNode> nodes) : nodes_(std::move(nodes)) {}
  void Line(size_t node, OutputStream stream, std::string_view text) override;

 private:
  std::vector<SessionNode> nodes_;
};

/// One file per node under a directory.
class LogDirPrinter : public LinePrinter {
 public:
  /// Creates `dir` (and parents) and DIR/HOST.log for every node.
  /// Errors: kUnavailable naming the file that could not be created.
  static Result<std::unique_ptr<LogDirPrinter>> Open(const std::string& dir, const std::vector<SessionNode>& nodes);
  ~LogDirPrinter() override;
  void Line(size_t node, OutputStream stream, std::string_view text) override;

 private:
  std::vector<std::FILE*> files_;
};

}  // namespace topolaunch::cli
