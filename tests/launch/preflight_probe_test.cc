// GatherPreflight on this machine: real PATH, a real listening socket, the
// live hwloc topology, the kernel's routes and clock.
#include "launch/preflight_probe.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <filesystem>

#include <gtest/gtest.h>

#include "audit/audit_fake_sysfs.h"
#include "support/test_paths.h"

namespace topolaunch {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

PreflightRequest Quick() {
  PreflightRequest request;
  request.want_layout = false;
  return request;
}

TEST(GatherPreflight, FindsProgramsInPathAndByPath) {
  testing::TempDir dir;
  std::string script = dir.File("run.sh"), plain = dir.File("data.txt");
  std::ofstream(script) << "#!/bin/sh\n";
  std::ofstream(plain) << "x\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  PreflightRequest request = Quick();
  request.programs = {"sh", "no-such-program-xyz", script, plain, dir.path(), ""};
  PreflightReply reply = GatherPreflight(request);
  ASSERT_EQ(reply.programs.size(), 6u);
  EXPECT_EQ(reply.programs[0].name, "sh");
  EXPECT_TRUE(reply.programs[0].path.ends_with("/sh")) << reply.programs[0].path;
  EXPECT_EQ(access(reply.programs[0].path.c_str(), X_OK), 0);
  EXPECT_EQ(reply.programs[1], (ProgramFound{"no-such-program-xyz", ""}));
  EXPECT_EQ(reply.programs[2], (ProgramFound{script, script}));
  EXPECT_EQ(reply.programs[3], (ProgramFound{plain, ""})) << "not executable";
  EXPECT_EQ(reply.programs[4], (ProgramFound{dir.path(), ""})) << "a folder is not a program";
  EXPECT_EQ(reply.programs[5], (ProgramFound{"", ""}));
}

// A socket listening on an ephemeral port of every address; closed by the destructor.
class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t size = sizeof address;
    if (fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&address), size) == 0 && listen(fd_, 1) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) == 0)
      port_ = ntohs(address.sin_port);
  }
  ~Listener() { Close(); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(GatherPreflight, PortHeldByAListenerIsNotFree) {
  Listener listener;
  ASSERT_GT(listener.port(), 0);
  PreflightRequest request = Quick();
  request.master_port = listener.port();
  PreflightReply held = GatherPreflight(request);
  EXPECT_EQ(held.port_free, false);
  EXPECT_EQ(held.port_problem, "in use");
  listener.Close();
  PreflightReply freed = GatherPreflight(request);
  EXPECT_EQ(freed.port_free, true) << freed.port_problem;
  EXPECT_EQ(freed.port_problem, "");
}

TEST(GatherPreflight, PortZeroIsNotChecked) {
  EXPECT_EQ(GatherPreflight(Quick()).port_free, std::nullopt);
}

TEST(GatherPreflight, LiveLayoutWhenAsked) {
  PreflightRequest request;
  request.want_layout = true;
  PreflightReply reply = GatherPreflight(request);
  ASSERT_TRUE(reply.layout.has_value()) << reply.layout_problem;
  EXPECT_EQ(reply.layout_problem, "");
  EXPECT_GE(reply.layout->numa_nodes.size(), 1u);
  EXPECT_EQ(reply.layout->pus, sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_EQ(reply.gpus, static_cast<int>(reply.layout->gpus.size()));
}

TEST(GatherPreflight, NoLayoutWhenNotAsked) {
  PreflightReply reply = GatherPreflight(Quick());
  EXPECT_FALSE(reply.layout.has_value());
  EXPECT_EQ(reply.gpus, 0);
}

TEST(GatherPreflight, HostnameClockAndRdmaPorts) {
  int64_t before = NowMs();
  PreflightReply reply = GatherPreflight(Quick());
  int64_t after = NowMs();
  EXPECT_GE(reply.unix_time_ms, before);
  EXPECT_LE(reply.unix_time_ms, after);
  char name[256] = {};
  ASSERT_EQ(gethostname(name, sizeof name - 1), 0);
  std::string expected = name;
  EXPECT_EQ(reply.hostname, expected.substr(0, expected.find('.')));
  // Readable sysfs: a list (empty on a machine without RDMA devices), not nullopt.
  EXPECT_TRUE(reply.rdma_ports.has_value());
}

TEST(GatherPreflight, RouteTowardTheMasterWhenNamed) {
  EXPECT_FALSE(GatherPreflight(Quick()).socket_route.has_value()) << "no master_addr: not looked up";
  PreflightRequest request = Quick();
  request.master_addr = "127.0.0.1";
  PreflightReply local = GatherPreflight(request);
  // This machine: the default route's interface, or a problem where there is none.
  if (local.socket_route) {
    EXPECT_FALSE(local.socket_route->interface.empty());
    EXPECT_EQ(local.socket_route_problem, "");
  } else {
    EXPECT_NE(local.socket_route_problem, "");
  }
  request.master_addr = "no-such-host.invalid";
  PreflightReply unknown = GatherPreflight(request);
  EXPECT_FALSE(unknown.socket_route.has_value());
  EXPECT_NE(unknown.socket_route_problem.find("no-such-host.invalid"), std::string::npos) << unknown.socket_route_problem;
}

}  // namespace
}  // namespace topolaunch

namespace topolaunch {
namespace {

TEST(GatherPreflight, FolderAndScriptAreChecked) {
  testing::TempDir dir;
  std::ofstream(dir.File("train.py")) << "print(1)\n";
  std::filesystem::create_directory(dir.File("pkg"));
  PreflightRequest request;
  request.want_layout = false;
  request.cwd = dir.path();
  request.files = {"train.py", dir.File("train.py"), "absent.py", "pkg"};
  PreflightReply reply = GatherPreflight(request);
  EXPECT_EQ(reply.cwd_problem, "");
  EXPECT_EQ(reply.file_problems, (std::vector<std::string>{dir.File("absent.py") + ": No such file or directory",
                                                           dir.File("pkg") + ": a folder, not a script"}));

  request.cwd = dir.File("train.py");
  EXPECT_EQ(GatherPreflight(request).cwd_problem, dir.File("train.py") + ": not a folder");
  request.cwd = dir.File("nowhere");
  reply = GatherPreflight(request);
  EXPECT_EQ(reply.cwd_problem, dir.File("nowhere") + ": No such file or directory");
  EXPECT_TRUE(reply.file_problems.empty()) << "files are not looked for in a folder that is not there";
}

// --audit: the node checks of `audit --local` on the sysfs tree asked for;
// the sick node's GPU at x8 is named, a healthy node has none, and without
// the request nothing is said.
TEST(GatherPreflight, NodeChecksWhenAsked) {
  PreflightRequest request = Quick();
  EXPECT_EQ(GatherPreflight(request).audit_errors, std::nullopt);
  testing::FakeSysfs sick, healthy;
  testing::SickNode(sick);
  testing::HealthyNode(healthy);
  request.audit = true;
  request.sysfs_root = sick.root();
  std::optional<std::vector<std::string>> errors = GatherPreflight(request).audit_errors;
  ASSERT_TRUE(errors.has_value());
  ASSERT_EQ(errors->size(), 1u) << ::testing::PrintToString(*errors);
  EXPECT_NE(errors->front().find("gpu_pcie_link: "), std::string::npos) << errors->front();
  EXPECT_NE(errors->front().find("0000:0a:00.0"), std::string::npos) << errors->front();
  request.sysfs_root = healthy.root();
  EXPECT_EQ(GatherPreflight(request).audit_errors, std::vector<std::string>{});
}

}  // namespace
}  // namespace topolaunch
