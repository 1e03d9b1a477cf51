#include "env/rdma_sysfs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "topolaunch/topology.h"

namespace topolaunch {

namespace {

namespace fs = std::filesystem;

// First line of a sysfs file without the newline; "" when unreadable (the
// kernel answers EINVAL for GID entries that are not populated).
std::string ReadLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

bool AllZero(const std::string& gid) {
  return std::all_of(gid.begin(), gid.end(), [](char c) { return c == '0' || c == ':'; });
}

std::vector<int> NumberedEntries(const fs::path& dir) {
  std::vector<int> numbers;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) numbers.push_back(std::stoi(name));
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

RdmaPort ReadPort(const fs::path& port_dir, const std::string& device, int number) {
  RdmaPort port;
  port.device = device;
  port.port = number;
  port.link_layer = ReadLine(port_dir / "link_layer");
  std::string state = ReadLine(port_dir / "state");  // "4: ACTIVE"
  size_t colon = state.find(": ");
  port.state = colon == std::string::npos ? state : state.substr(colon + 2);
  for (int index : NumberedEntries(port_dir / "gids")) {
    std::string gid = ReadLine(port_dir / "gids" / std::to_string(index));
    std::string type = ReadLine(port_dir / "gid_attrs" / "types" / std::to_string(index));
    if (gid.empty() || AllZero(gid) || type.empty()) continue;
    port.gids.push_back({index, gid, type, ReadLine(port_dir / "gid_attrs" / "ndevs" / std::to_string(index))});
  }
  return port;
}

}  // namespace

Result<std::vector<RdmaPort>> ReadRdmaPorts(const std::string& root) {
  std::error_code ec;
  if (!fs::exists(root, ec)) return std::vector<RdmaPort>{};
  std::vector<std::string> devices;
  for (const auto& entry : fs::directory_iterator(root, ec)) devices.push_back(entry.path().filename().string());
  if (ec) return Error(ErrorCode::kUnavailable, root, fmt::format("cannot list RDMA devices: {}", ec.message()));
  std::sort(devices.begin(), devices.end(), [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
  std::vector<RdmaPort> ports;
  for (const std::string& device : devices) {
    fs::path ports_dir = fs::path(root) / device / "ports";
    for (int number : NumberedEntries(ports_dir)) ports.push_back(ReadPort(ports_dir / std::to_string(number), device, number));
  }
  return ports;
}

}  // namespace topolaunch
