#include "launch/rank_output_socket.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace topolaunch {

namespace {

// A hello longer than this is no hello: the connection is dropped.
constexpr size_t kHelloLimit = 64;
// More connections than this (a node runs a few ranks, each two) are refused.
constexpr size_t kMaxConnections = 4096;
// One read per connection per pass: no rank can starve the others or the agent's stdin.
constexpr size_t kReadChunk = 64 << 10;

std::string Errno(std::string_view what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

std::optional<sockaddr_un> SocketAddress(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return std::nullopt;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

// mkdtemp under $TMPDIR, else /tmp (also when $TMPDIR is too long for a socket path).
std::string PrivateFolder() {
  const char* tmpdir = std::getenv("TMPDIR");
  for (std::string base : {tmpdir && *tmpdir == '/' ? std::string(tmpdir) : std::string(), std::string("/tmp")}) {
    if (base.empty() || base.size() > 60) continue;
    std::string folder = base + "/topolaunch-agent.XXXXXX";
    if (mkdtemp(folder.data())) return folder;
  }
  return "";
}

}  // namespace

struct RankOutputCollector::Connection {
  int fd = -1;
  std::string hello;              ///< the hello line so far
  std::optional<RankHello> who;   ///< once the hello is read
  LineSplitter splitter{kRankLineLimit, LineSplitter::LongLines::kSplit};
  ~Connection() {
    if (fd >= 0) close(fd);
  }
};

Result<std::unique_ptr<RankOutputCollector>> RankOutputCollector::Open() {
  std::unique_ptr<RankOutputCollector> collector(new RankOutputCollector());
  collector->folder_ = PrivateFolder();
  if (collector->folder_.empty()) return Error(ErrorCode::kUnavailable, "rank output", Errno("no private folder in $TMPDIR or /tmp"));
  collector->path_ = collector->folder_ + "/out";
  std::optional<sockaddr_un> address = SocketAddress(collector->path_);
  collector->listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (collector->listen_fd_ < 0) return Error(ErrorCode::kUnavailable, "rank output", Errno("socket"));
  if (!address || bind(collector->listen_fd_, reinterpret_cast<const sockaddr*>(&*address), sizeof *address) != 0 ||
      listen(collector->listen_fd_, 256) != 0)
    return Error(ErrorCode::kUnavailable, collector->path_, Errno("cannot listen"));
  return collector;
}

RankOutputCollector::~RankOutputCollector() {
  connections_.clear();
  if (listen_fd_ >= 0) close(listen_fd_);
  if (!path_.empty()) unlink(path_.c_str());
  if (!folder_.empty()) rmdir(folder_.c_str());
}

void RankOutputCollector::AppendPollFds(std::vector<pollfd>& fds) const {
  fds.push_back({listen_fd_, POLLIN, 0});
  for (const std::unique_ptr<Connection>& connection : connections_) fds.push_back({connection->fd, POLLIN, 0});
}

void RankOutputCollector::Accept() {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    if (connections_.size() >= kMaxConnections) {
      close(fd);
      continue;
    }
    auto connection = std::make_unique<Connection>();
    connection->fd = fd;
    connections_.push_back(std::move(connection));
  }
}

bool RankOutputCollector::Read(Connection& connection, const RankLineSink& sink) {
  char buffer[kReadChunk];
  ssize_t got = read(connection.fd, buffer, sizeof buffer);
  if (got < 0) return errno == EAGAIN || errno == EINTR;
  std::string_view bytes(buffer, static_cast<size_t>(got));
  auto emit = [&](std::string_view line) { sink(connection.who->label, connection.who->stream, line); };
  if (!connection.who) {
    size_t end = bytes.find('\n');
    connection.hello.append(bytes.substr(0, end));
    if (connection.hello.size() > kHelloLimit) return false;
    if (end == std::string_view::npos) return got > 0;
    connection.who = ParseRankHello(connection.hello);
    if (!connection.who) return false;
    bytes.remove_prefix(end + 1);
  }
  connection.splitter.Feed(bytes, emit);
  if (got == 0) connection.splitter.Flush(emit);
  return got > 0;
}

void RankOutputCollector::Service(std::span<const pollfd> ready, const RankLineSink& sink) {
  if (!ready.empty() && (ready[0].revents & POLLIN)) Accept();
  // The entries after the socket are the connections as they were when
  // polled; those accepted just now come after them and wait the next pass.
  std::vector<Connection*> ended;
  for (size_t i = 1; i < ready.size() && i - 1 < connections_.size(); ++i)
    if (ready[i].revents & (POLLIN | POLLHUP | POLLERR))
      if (!Read(*connections_[i - 1], sink)) ended.push_back(connections_[i - 1].get());
  std::erase_if(connections_, [&](const std::unique_ptr<Connection>& c) {
    return std::find(ended.begin(), ended.end(), c.get()) != ended.end();
  });
}

void RankOutputCollector::Drain(std::chrono::milliseconds limit, const RankLineSink& sink) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  Accept();  // a rank that connected at the very end
  while (!connections_.empty() && std::chrono::steady_clock::now() < deadline) {
    std::vector<pollfd> fds;
    AppendPollFds(fds);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(left.count(), 0))) < 0 && errno != EINTR) break;
    fds[0].revents = 0;  // no new ranks now
    Service(fds, sink);
  }
  for (std::unique_ptr<Connection>& connection : connections_)
    if (connection->who)
      connection->splitter.Flush([&](std::string_view line) { sink(connection->who->label, connection->who->stream, line); });
}

Status ConnectRankOutput(const std::string& path, RankLabel label) {
  std::optional<sockaddr_un> address = SocketAddress(path);
  if (!address) return Error(ErrorCode::kUnavailable, kRankOutputEnvName, "path too long for a socket");
  for (OutputStream stream : {OutputStream::kStdout, OutputStream::kStderr}) {
    int target = stream == OutputStream::kStdout ? 1 : 2;
    struct stat now {};
    if (fstat(target, &now) == 0 && S_ISREG(now.st_mode)) continue;  // torchrun --redirects: its file stays
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return Error(ErrorCode::kUnavailable, path, Errno("socket"));
    std::string hello = FormatRankHello(label, stream);
    bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&*address), sizeof *address) == 0 &&
              write(fd, hello.data(), hello.size()) == static_cast<ssize_t>(hello.size());
    ok = ok && dup2(fd, target) == target;  // dup2's copy is not close-on-exec
    Status status = ok ? Status(Ok{}) : Status(Error(ErrorCode::kUnavailable, path, Errno("cannot reach the agent")));
    close(fd);
    if (!status.ok()) return status;
  }
  return Ok{};
}

}  // namespace topolaunch
