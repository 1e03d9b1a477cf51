#include "run/run_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/console.h"
#include "core/terminal_text.h"

namespace topolaunch::run {

namespace {

// A log file made anew, never through a symlink (one planted in a shared
// --log-dir would choose what `run` truncates); errno tells why not.
std::FILE* CreateLogFile(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return nullptr;
  std::FILE* stream = fdopen(fd, "w");
  if (!stream) close(fd);
  return stream;
}

}  // namespace

PrefixPrinter::PrefixPrinter(std::vector<SessionNode> nodes, TerminalChoice choice, std::FILE* out, std::FILE* err,
                             bool status_in_place)
    : nodes_(std::move(nodes)), choice_(std::move(choice)), streams_{out, err}, status_in_place_(status_in_place) {}

bool PrefixPrinter::Shows(const NodeLine& line) const {
  if (line.label.rank < 0) return choice_.node_lines;
  return choice_.rank_lines && (!choice_.ranks || choice_.ranks->Contains(line.label.rank));
}

void PrefixPrinter::EraseStatus() {
  if (status_in_place_ && !status_.empty()) PrintTo(streams_[1], "\r\x1b[K");
}

void PrefixPrinter::DrawStatus() {
  if (status_in_place_ && !status_.empty()) PrintTo(streams_[1], status_);
}

void PrefixPrinter::Status(std::string_view text) {
  if (!status_in_place_) {
    if (!text.empty()) PrintTo(streams_[1], fmt::format("topolaunch: {}\n", TerminalSafe(text)));
    return;
  }
  EraseStatus();
  status_ = text.empty() ? "" : fmt::format("topolaunch: {}", TerminalSafe(text));
  DrawStatus();
}

void PrefixPrinter::Line(const NodeLine& line) {
  if (!Shows(line)) return;
  int i = line.stream == OutputStream::kStdout ? 0 : 1;
  if (broken_[i]) {
    ++lost_[i];
    return;
  }
  const SessionNode& node = nodes_[line.node];
  std::string text = line.label.rank < 0
                         ? fmt::format("{}[{}]: {}\n", node.host, node.node_rank, TerminalSafe(line.text))
                         : fmt::format("{}[{}] {}: {}\n", node.host, node.node_rank, line.label.rank, TerminalSafe(line.text));
  EraseStatus();
  errno = 0;
  bool written = PrintTo(streams_[i], text);
  DrawStatus();
  if (written) return;
  broken_[i] = true;
  ++lost_[i];
  std::clearerr(streams_[i]);
  if (i == 0)
    Note(fmt::format("cannot write to stdout ({}): the nodes' stdout lines are dropped from here on; the job goes on",
                     errno ? std::strerror(errno) : "write error"));
}

Result<std::unique_ptr<LogDirPrinter>> LogDirPrinter::Open(const std::string& dir, const std::vector<SessionNode>& nodes) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error(ErrorCode::kUnavailable, "--log-dir " + dir, ec.message());
  std::unique_ptr<LogDirPrinter> printer(new LogDirPrinter());
  printer->dir_ = dir;
  for (const SessionNode& node : nodes) {
    std::string file = fmt::format("{}/{}.log", dir, node.host);
    std::FILE* f = CreateLogFile(file);
    if (!f) return Error(ErrorCode::kUnavailable, file, std::strerror(errno));
    printer->node_files_.push_back({file, f, false, "this node's"});
  }
  return printer;
}

LogDirPrinter::~LogDirPrinter() {
  auto close = [](File& file) {
    if (file.stream && std::fclose(file.stream) != 0 && !file.broken)
      Note(fmt::format("{}: {}: its last lines may be lost", file.path, std::strerror(errno)));
  };
  for (File& file : node_files_) close(file);
  for (auto& [rank, file] : rank_files_) close(file);
}

void LogDirPrinter::Write(File& file, std::string_view text) {
  if (file.broken) {
    ++lost_;
    return;
  }
  errno = 0;
  std::string line(text);
  line += '\n';
  if (PrintTo(file.stream, line)) return;
  file.broken = true;
  ++lost_;
  Note(fmt::format("cannot write to {} ({}): {} lines are dropped from here on; the job goes on", file.path,
                   errno ? std::strerror(errno) : "write error", file.whose));
}

void LogDirPrinter::Line(const NodeLine& line) {
  if (line.label.rank < 0) {
    Write(node_files_[line.node], line.text);
    return;
  }
  auto [it, made] = rank_files_.try_emplace(line.label.rank);
  File& file = it->second;
  if (made) {
    file.path = fmt::format("{}/{}.log", dir_, line.label.rank);
    file.whose = fmt::format("rank {}'s", line.label.rank);
    file.stream = CreateLogFile(file.path);
    if (!file.stream) {
      file.broken = true;
      Note(fmt::format("cannot create {} ({}): rank {}'s lines are dropped; the job goes on", file.path, std::strerror(errno),
                       line.label.rank));
    }
  }
  Write(file, line.text);
}

Result<std::unique_ptr<RunOutput>> OpenRunOutput(const std::string& log_dir, const std::string& ranks_output,
                                                 const std::vector<SessionNode>& nodes) {
  auto output = std::make_unique<RunOutput>();
  if (!ranks_output.empty()) {
    Result<RankSet> ranks = RankSet::Parse(ranks_output, "--ranks-output");
    if (!ranks.ok()) return ranks.take_error();
    output->ranks_output = std::move(ranks).value();
  }
  TerminalChoice choice;
  choice.ranks = output->ranks_output;
  choice.node_lines = log_dir.empty();
  choice.rank_lines = log_dir.empty() || choice.ranks;
  output->terminal = std::make_unique<PrefixPrinter>(nodes, std::move(choice), stdout, stderr, isatty(STDERR_FILENO) == 1);
  if (log_dir.empty()) return output;
  Result<std::unique_ptr<LogDirPrinter>> files = LogDirPrinter::Open(log_dir, nodes);
  if (!files.ok()) return files.take_error();
  output->files = std::move(files).value();
  output->both = std::make_unique<TeePrinter>(std::vector<LinePrinter*>{output->files.get(), output->terminal.get()});
  return output;
}

}  // namespace topolaunch::run
