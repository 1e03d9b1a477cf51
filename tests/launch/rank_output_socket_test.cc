// The agent's per-rank output connections, end to end on this machine: a
// child connects as `bind` does and writes; the collector reads.
#include "launch/rank_output_socket.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

using std::chrono::milliseconds;

struct Received {
  RankLabel label;
  OutputStream stream;
  std::string text;
  bool operator==(const Received&) const = default;
};

// Services `collector` until `child` has ended, then drains it.
std::vector<Received> Collect(RankOutputCollector& collector, pid_t child) {
  std::vector<Received> got;
  RankLineSink sink = [&](RankLabel label, OutputStream stream, std::string_view text) {
    got.push_back({label, stream, std::string(text)});
  };
  for (int status = 0;;) {
    std::vector<pollfd> fds;
    collector.AppendPollFds(fds);
    poll(fds.data(), fds.size(), 50);
    collector.Service(fds, sink);
    if (child > 0 && waitpid(child, &status, WNOHANG) == child) break;
  }
  collector.Drain(milliseconds(2000), sink);
  return got;
}

void WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t put = write(fd, text.data(), text.size());
    if (put <= 0) _exit(9);
    text.remove_prefix(static_cast<size_t>(put));
  }
}

TEST(RankOutputSocket, EachStreamOfARankArrivesWholeAndLabelled) {
  Result<std::unique_ptr<RankOutputCollector>> collector = RankOutputCollector::Open();
  ASSERT_TRUE(collector.ok()) << collector.error().Message();
  std::string path = (*collector)->path();
  struct stat folder {};
  ASSERT_EQ(stat(std::filesystem::path(path).parent_path().c_str(), &folder), 0);
  EXPECT_EQ(folder.st_mode & 0777, 0700u) << "no other user may connect";
  pid_t child = fork();
  if (child == 0) {
    if (!ConnectRankOutput(path, {5, 1}).ok()) _exit(8);
    WriteAll(1, "hello ");  // text and newline apart, as print() does
    WriteAll(1, "world\n");
    WriteAll(2, "oops\n");
    WriteAll(1, std::string(100'000, 'z') + "\n");
    WriteAll(1, "the end without a newline");
    _exit(0);
  }
  std::vector<Received> got = Collect(**collector, child);
  std::vector<Received> out, err;
  for (const Received& r : got) (r.stream == OutputStream::kStdout ? out : err).push_back(r);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], (Received{{5, 1}, OutputStream::kStdout, "hello world"}));
  EXPECT_EQ(out[1].text, std::string(kRankLineLimit, 'z') + std::string(LineSplitter::kSplitMarker));
  EXPECT_EQ(out[2].text, std::string(100'000 - kRankLineLimit, 'z'));
  EXPECT_EQ(out[3].text, "the end without a newline");
  EXPECT_EQ(err, (std::vector<Received>{{{5, 1}, OutputStream::kStderr, "oops"}}));
  EXPECT_EQ((*collector)->connections(), 0u);
  collector->reset();
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(path).parent_path())) << "the folder is removed";
}

TEST(RankOutputSocket, AStreamTorchrunRedirectedToAFileStaysThere) {
  Result<std::unique_ptr<RankOutputCollector>> collector = RankOutputCollector::Open();
  ASSERT_TRUE(collector.ok()) << collector.error().Message();
  std::string file = std::filesystem::path((*collector)->path()).parent_path() / "stdout.log";
  pid_t child = fork();
  if (child == 0) {
    int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 1) != 1) _exit(7);
    if (!ConnectRankOutput((*collector)->path(), {2, 0}).ok()) _exit(8);
    WriteAll(1, "to the file\n");
    WriteAll(2, "to the agent\n");
    _exit(0);
  }
  std::vector<Received> got = Collect(**collector, child);
  EXPECT_EQ(got, (std::vector<Received>{{{2, 0}, OutputStream::kStderr, "to the agent"}}));
  std::string written(64, '\0');
  int fd = open(file.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  written.resize(static_cast<size_t>(read(fd, written.data(), written.size())));
  close(fd);
  unlink(file.c_str());
  EXPECT_EQ(written, "to the file\n");
}

// Whatever connects without a hello (or with a bad or endless one) is
// dropped, and its bytes never reach the sink.
TEST(RankOutputSocket, ConnectionsWithoutAHelloAreDropped) {
  Result<std::unique_ptr<RankOutputCollector>> collector = RankOutputCollector::Open();
  ASSERT_TRUE(collector.ok()) << collector.error().Message();
  std::string path = (*collector)->path();
  pid_t child = fork();
  if (child == 0) {
    for (std::string junk : {std::string("GET / HTTP/1.0\n"), std::string(1000, 'x'), std::string("topolaunch-rank 1 5 out\nx\n")}) {
      int fd = socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un address{};
      address.sun_family = AF_UNIX;
      std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
      if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) _exit(8);
      (void)write(fd, junk.data(), junk.size());
      close(fd);
    }
    _exit(0);
  }
  EXPECT_EQ(Collect(**collector, child), std::vector<Received>{});
  EXPECT_EQ((*collector)->connections(), 0u);
}

TEST(RankOutputSocket, NoAgentListeningIsAnErrorAndTheStreamsStay) {
  Status status = ConnectRankOutput("/nonexistent-topolaunch-test/out", {0, 0});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().Message().find("cannot reach the agent"), std::string::npos) << status.error().Message();
  struct stat out {};
  EXPECT_EQ(fstat(1, &out), 0);
}

}  // namespace
}  // namespace topolaunch
