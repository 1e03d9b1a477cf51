#include "support/node_cgroups.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "support/subprocess.h"

namespace topolaunch::testing {

namespace {

constexpr const char* kRoot = "/sys/fs/cgroup";
constexpr const char* kPrefix = "topolaunch-test-";

std::string ControllerPath(const std::string& controller) { return std::string(kRoot) + "/" + controller; }

// A one-line cgroup file's value, without its newline.
std::string TrimmedFile(const std::string& path) {
  std::string value = ReadFile(path);
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
  return value;
}

bool WriteValue(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  return static_cast<bool>(out);
}

// `top` and every cgroup below it, deepest first.
std::vector<std::filesystem::path> TreeDeepestFirst(const std::filesystem::path& top) {
  std::vector<std::filesystem::path> tree;
  std::error_code ec;
  if (!std::filesystem::is_directory(top, ec)) return tree;
  tree.push_back(top);
  for (auto it = std::filesystem::recursive_directory_iterator(top, ec); !ec && it != std::filesystem::end(it);
       it.increment(ec))
    if (it->is_directory(ec)) tree.push_back(it->path());
  std::sort(tree.begin(), tree.end(), [](const auto& a, const auto& b) { return a.native().size() > b.native().size(); });
  return tree;
}

// Thaws (a proctrack/cgroup step may be frozen mid-signal) and kills every
// process in the tree, then removes it, retrying while the killed
// processes exit. Returns whether the tree is gone.
bool RemoveTree(const std::filesystem::path& top, bool kill_members) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::vector<std::filesystem::path> tree = TreeDeepestFirst(top);
    if (tree.empty()) return true;
    for (const auto& cgroup : tree) {
      if (kill_members) {
        if (std::filesystem::exists(cgroup / "freezer.state")) WriteValue(cgroup / "freezer.state", "THAWED");
        std::ifstream procs(cgroup / "cgroup.procs");
        for (pid_t pid; procs >> pid;) kill(pid, SIGKILL);
      }
      rmdir(cgroup.c_str());
    }
    if (!kill_members && std::filesystem::exists(top)) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return !std::filesystem::exists(top);
}

// Folders left by test processes that are gone: removed where empty.
void SweepDeadOwners(const std::string& controller) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(ControllerPath(controller), ec)) {
    std::string name = entry.path().filename();
    if (name.rfind(kPrefix, 0) != 0) continue;
    pid_t owner = static_cast<pid_t>(std::atol(name.c_str() + std::char_traits<char>::length(kPrefix)));
    if (owner > 0 && (kill(owner, 0) == 0 || errno != ESRCH)) continue;
    RemoveTree(entry.path(), false);
  }
}

}  // namespace

const std::vector<std::string>& NodeCgroups::Controllers() {
  static const std::vector<std::string> controllers = {"cpuset", "devices", "freezer", "memory"};
  return controllers;
}

std::string NodeCgroups::Unavailable() {
  for (const std::string& controller : Controllers())
    if (access((ControllerPath(controller) + "/cgroup.clone_children").c_str(), W_OK) != 0)
      return fmt::format("the {} controller is not mounted as cgroup v1 at {} (or not writable): Slurm's "
                         "task/cgroup on cgroup v1 cannot be tried on this machine",
                         controller, ControllerPath(controller));
  return "";
}

std::string NodeCgroups::FolderName(const std::string& node) const { return fmt::format("{}{}-{}", kPrefix, getpid(), node); }

Result<NodeCgroups> NodeCgroups::Create(const std::vector<std::string>& nodes) {
  if (std::string why = Unavailable(); !why.empty()) return Error(ErrorCode::kUnavailable, "cgroup", why);
  for (const std::string& controller : Controllers()) SweepDeadOwners(controller);
  NodeCgroups made({});
  for (const std::string& node : nodes) {
    std::string name = made.FolderName(node);
    made.folder_names_.push_back(name);
    for (const std::string& controller : Controllers()) {
      std::string folder = ControllerPath(controller) + "/" + name;
      if (mkdir(folder.c_str(), 0755) != 0 && errno != EEXIST)
        return Error(ErrorCode::kUnavailable, folder, std::strerror(errno));
      if (controller != "cpuset") continue;
      for (const char* file : {"cpuset.cpus", "cpuset.mems"})
        if (!WriteValue(folder + "/" + file, TrimmedFile(ControllerPath(controller) + "/" + file)))
          return Error(ErrorCode::kUnavailable, folder + "/" + file, "cannot be written");
    }
  }
  return made;
}

NodeCgroups::~NodeCgroups() {
  for (const std::string& name : folder_names_)
    for (const std::string& controller : Controllers()) RemoveTree(ControllerPath(controller) + "/" + name, true);
}

std::vector<std::string> NodeCgroups::Wrap(const std::string& node, const std::vector<std::string>& argv) const {
  std::string mounts;
  for (const std::string& controller : Controllers())
    mounts += fmt::format("mount --bind {0}/\"$0\" {0} && ", ControllerPath(controller));
  std::vector<std::string> wrapped = {"/bin/sh", "-c", mounts + "exec \"$@\"", FolderName(node)};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

}  // namespace topolaunch::testing
