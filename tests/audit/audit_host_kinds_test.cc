#include "audit/audit_host_kinds.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

TEST(HostKind, DigitRunsAreOnePlaceholder) {
  EXPECT_EQ(HostKind("gpu017"), "gpu#");
  EXPECT_EQ(HostKind("gpu7"), HostKind("gpu221"));
  EXPECT_EQ(HostKind("dgx-a1-n12"), "dgx-a#-n#");
  EXPECT_EQ(HostKind("STOR01"), "stor#");
  EXPECT_EQ(HostKind("ufm"), "ufm");
  EXPECT_NE(HostKind("stor01"), HostKind("gpu01"));
  EXPECT_EQ(HostKind("42"), "#");
  EXPECT_EQ(HostKind(""), "");
}

}  // namespace
}  // namespace topolaunch
