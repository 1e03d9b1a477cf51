#include "env/route_table.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

namespace topolaunch {
namespace {

std::uint32_t Ip(const char* dotted) {
  in_addr a{};
  inet_pton(AF_INET, dotted, &a);
  return a.s_addr;
}

// As a little-endian kernel prints it: 10.0.0.0/24 on ens1f0, 10.200.0.0/16
// on br0 (metric 5) and 10.200.1.0/24 on eth1, default via eth0, a down route.
constexpr const char* kTable =
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    "eth0\t00000000\t0100A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
    "ens1f0\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
    "br0\t0000C80A\t00000000\t0001\t0\t0\t5\t0000FFFF\t0\t0\t0\n"
    "eth1\t0001C80A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
    "dead0\t0002C80A\t00000000\t0000\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";

TEST(RouteTable, LongestPrefixThenMetric) {
  Result<std::vector<RouteEntry>> routes = ParseProcNetRoute(kTable, "/proc/net/route");
  ASSERT_TRUE(routes.ok()) << routes.error().Message();
  ASSERT_EQ(routes->size(), 5u);
  struct Case { const char* address; std::optional<std::string> iface; };
  for (const Case& c : {Case{"10.0.0.7", "ens1f0"}, Case{"10.200.1.9", "eth1"}, Case{"10.200.2.9", "br0"},
                        Case{"8.8.8.8", "eth0"}, Case{"0.0.0.0", "eth0"}})
    EXPECT_EQ(ChooseRoute(*routes, Ip(c.address)), c.iface) << c.address;
  EXPECT_EQ(ChooseRoute({}, Ip("10.0.0.1")), std::nullopt);
}

TEST(RouteTable, BadLinesAreNamed) {
  Result<std::vector<RouteEntry>> routes = ParseProcNetRoute("header\neth0 zz\neth1 XYZ 0 1 0 0 0 0\n", "route");
  ASSERT_FALSE(routes.ok());
  ASSERT_EQ(routes.error().problems.size(), 2u);
  EXPECT_EQ(routes.error().problems[0].where, "route:2");
  EXPECT_EQ(routes.error().problems[1].where, "route:3");
}

}  // namespace
}  // namespace topolaunch
