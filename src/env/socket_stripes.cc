#include "env/socket_stripes.h"

#include <algorithm>
#include <charconv>
#include <set>

namespace topolaunch {

std::optional<Ipv4Subnet> SubnetOf(std::string_view address) {
  std::uint32_t ip = 0;
  for (int part = 0; part < 4; ++part) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(address.data(), address.data() + address.size(), value);
    size_t used = static_cast<size_t>(end - address.data());
    if (ec != std::errc() || used == 0 || used > 3 || value > 255) return std::nullopt;
    address.remove_prefix(used);
    char want = part < 3 ? '.' : '/';
    if (address.empty() || address[0] != want) return std::nullopt;
    address.remove_prefix(1);
    ip = ip << 8 | value;
  }
  int prefix = -1;
  auto [end, ec] = std::from_chars(address.data(), address.data() + address.size(), prefix);
  if (ec != std::errc() || end != address.data() + address.size() || address.empty() || prefix < 0 || prefix > 32)
    return std::nullopt;
  std::uint32_t mask = prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
  return Ipv4Subnet{ip & mask, prefix};
}

bool IsVirtualInterface(std::string_view name) {
  for (std::string_view prefix : {"docker", "virbr", "veth", "br-", "cni", "flannel", "cali", "tun", "tap", "wg",
                                  "tailscale", "vxlan", "kube", "lxc", "podman"})
    if (name.starts_with(prefix)) return true;
  return false;
}

std::set<Ipv4Subnet> SharedSubnets(const std::vector<std::vector<SocketInterface>>& hosts) {
  std::optional<std::set<Ipv4Subnet>> shared;
  for (const std::vector<SocketInterface>& interfaces : hosts) {
    std::set<Ipv4Subnet> own;
    for (const SocketInterface& i : interfaces)
      if (std::optional<Ipv4Subnet> subnet = SubnetOf(i.address); subnet && !IsVirtualInterface(i.name)) own.insert(*subnet);
    if (!shared) {
      shared = std::move(own);
      continue;
    }
    std::set<Ipv4Subnet> both;
    std::set_intersection(shared->begin(), shared->end(), own.begin(), own.end(), std::inserter(both, both.end()));
    shared = std::move(both);
  }
  return shared.value_or(std::set<Ipv4Subnet>{});
}

std::vector<std::string> StripeInterfaces(const std::vector<SocketInterface>& mine, const std::set<Ipv4Subnet>& shared,
                                          const std::string& routed) {
  auto on_shared = [&](const SocketInterface& i) {
    std::optional<Ipv4Subnet> subnet = SubnetOf(i.address);
    return subnet && shared.contains(*subnet) && !IsVirtualInterface(i.name);
  };
  auto first = std::find_if(mine.begin(), mine.end(), [&](const SocketInterface& i) { return i.name == routed; });
  if (first == mine.end() || !first->speed_mbps || !on_shared(*first)) return {};
  std::vector<std::string> names = {routed};
  std::set<Ipv4Subnet> used = {*SubnetOf(first->address)};
  for (const SocketInterface& i : mine) {
    if (i.name == routed || i.speed_mbps != first->speed_mbps || !on_shared(i)) continue;
    if (!used.insert(*SubnetOf(i.address)).second) continue;  // two NICs on one subnet: the kernel routes by one
    if (std::find(names.begin(), names.end(), i.name) == names.end()) names.push_back(i.name);
  }
  if (names.size() < 2) return {};
  return names;
}

}  // namespace topolaunch
