#include "env/socket_stripes.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

using Hosts = std::vector<std::vector<SocketInterface>>;

// Host `host`'s stripe, judged across all of `hosts`.
std::vector<std::string> StripeOf(const Hosts& hosts, size_t host, const std::string& routed) {
  return StripeInterfaces(hosts.at(host), SharedSubnets(hosts), routed);
}

// A host of a two-NIC Ethernet cluster: one 100G NIC per subnet, a 1G
// management port, docker's bridge.
std::vector<SocketInterface> TwoNicHost(int host, const std::string& first = "ens1f0", const std::string& second = "ens2f0") {
  return {{"docker0", "172.17.0.1/16", 10000},
          {first, "10.0.0." + std::to_string(host) + "/16", 100000},
          {second, "10.1.0." + std::to_string(host) + "/16", 100000},
          {"eno1", "192.168.1." + std::to_string(host) + "/24", 1000}};
}

TEST(SocketStripes, SubnetsParseAndAnythingElseIsRefused) {
  EXPECT_EQ(SubnetOf("10.1.2.3/16"), (Ipv4Subnet{0x0A010000, 16}));
  EXPECT_EQ(SubnetOf("10.1.2.3/32"), (Ipv4Subnet{0x0A010203, 32}));
  EXPECT_EQ(SubnetOf("10.1.2.3/0"), (Ipv4Subnet{0, 0}));
  for (std::string_view bad : {"", "10.1.2.3", "10.1.2/16", "10.1.2.256/16", "10.1.2.3/33", "10.1.2.3/", "a.b.c.d/8",
                               "10.1.2.3/16x", "10..2.3/16", "1000.1.2.3/8"})
    EXPECT_FALSE(SubnetOf(bad)) << bad;
}

TEST(SocketStripes, EveryHostStripesOverTheSubnetsAllHaveAtTheRoutedSpeed) {
  Hosts hosts = {TwoNicHost(1), TwoNicHost(2), TwoNicHost(3, "enp65s0", "enp66s0")};
  EXPECT_EQ(StripeOf(hosts, 0, "ens1f0"), (std::vector<std::string>{"ens1f0", "ens2f0"}));
  EXPECT_EQ(StripeOf(hosts, 2, "enp65s0"), (std::vector<std::string>{"enp65s0", "enp66s0"}))
      << "each host names its own interfaces";
  EXPECT_EQ(StripeOf(hosts, 1, "ens2f0"), (std::vector<std::string>{"ens2f0", "ens1f0"})) << "the routed one first";
  // eno1 is on a shared subnet too, but at 1G it would slow every channel on it down.
  EXPECT_EQ(StripeOf(hosts, 0, "eno1"), std::vector<std::string>{});
}

TEST(SocketStripes, NothingToStripeUnlessEveryHostHasTheSubnet) {
  Hosts hosts = {TwoNicHost(1), TwoNicHost(2), TwoNicHost(3)};
  hosts[2].erase(hosts[2].begin() + 2);  // host 3 has no interface on 10.1/16
  EXPECT_EQ(StripeOf(hosts, 0, "ens1f0"), std::vector<std::string>{});
  // The routed interface on a subnet not every host has: nothing either.
  hosts = {TwoNicHost(1), TwoNicHost(2)};
  hosts[1][1].address = "10.9.0.2/16";
  EXPECT_EQ(StripeOf(hosts, 0, "ens1f0"), std::vector<std::string>{});
  // Unknown speeds, an unknown routed name, no hosts at all.
  hosts = {TwoNicHost(1), TwoNicHost(2)};
  for (auto& host : hosts)
    for (SocketInterface& i : host) i.speed_mbps.reset();
  EXPECT_EQ(StripeOf(hosts, 0, "ens1f0"), std::vector<std::string>{});
  EXPECT_EQ(StripeOf({TwoNicHost(1)}, 0, "ib0"), std::vector<std::string>{});
  EXPECT_EQ(SharedSubnets({}), std::set<Ipv4Subnet>{});
}

TEST(SocketStripes, TwoInterfacesOnOneSubnetCountOnceAndBridgesNever) {
  Hosts hosts = {TwoNicHost(1), TwoNicHost(2)};
  for (auto& host : hosts) {
    host.push_back({"ens3f0", host[1].address, 100000});  // a second NIC on the first subnet: the kernel routes by one
    host.push_back({"br-lab", "10.5.0.1/16", 100000});    // a bridge on a subnet both happen to have
  }
  EXPECT_EQ(StripeOf(hosts, 0, "ens1f0"), (std::vector<std::string>{"ens1f0", "ens2f0"}));
}

}  // namespace
}  // namespace topolaunch
