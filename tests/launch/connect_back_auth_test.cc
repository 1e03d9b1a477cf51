// The handshake's proofs (connect_back_auth.h): each holds for its node and
// its connection only, so nothing seen on the wire proves anything again.
#include "launch/connect_back_auth.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

const std::string kSecret = "00112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef";
const std::string kNonceA = std::string(64, 'a');
const std::string kNonceB = std::string(64, 'b');
const std::string kNonceC = std::string(64, 'c');

class NodeCredentialTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(LoadChannelCrypto().ok()); }
};

TEST_F(NodeCredentialTest, BothSidesProveTheNodesKeyAndAgreeOnTheChannelKeys) {
  NodeCredential agent(kSecret, "node1"), run(kSecret, "node1");
  ConnectHello hello = agent.Hello(3, kNonceA);
  EXPECT_EQ(hello.task, 3);
  EXPECT_EQ(hello.host, "node1");
  ASSERT_TRUE(run.Proves(hello));
  RunAnswer answer = run.Answer(hello, kNonceB);
  ASSERT_TRUE(agent.Proves(hello, answer));
  std::string ready = agent.Ready(hello, answer);
  EXPECT_TRUE(run.ReadyProves(hello, answer, ready));
  ChannelKeys a = agent.Keys(hello, answer), r = run.Keys(hello, answer);
  EXPECT_EQ(a.to_agent, r.to_agent);
  EXPECT_EQ(a.to_run, r.to_run);
  EXPECT_NE(a.to_agent, a.to_run) << "one key per direction";
}

TEST_F(NodeCredentialTest, AHelloProvesNothingForAnotherNodeOrAnotherSecret) {
  ConnectHello hello = NodeCredential(kSecret, "node1").Hello(0, kNonceA);
  EXPECT_FALSE(NodeCredential(kSecret, "node2").Proves(hello));
  ConnectHello renamed = hello;
  renamed.host = "node2";
  EXPECT_FALSE(NodeCredential(kSecret, "node2").Proves(renamed)) << "a node's proof is bound to its name";
  std::string other = kSecret;
  other[0] = 'f';
  EXPECT_FALSE(NodeCredential(other, "node1").Proves(hello));
  ConnectHello retasked = hello;
  retasked.task = 1;
  EXPECT_FALSE(NodeCredential(kSecret, "node1").Proves(retasked));
}

// A relay saw one whole handshake. On its own connection `run` answers with
// a new nonce: the ready it saw proves nothing there, and its channel keys
// are other keys. An answer it saw proves nothing to an agent's new hello.
TEST_F(NodeCredentialTest, ARecordedHandshakeProvesNothingOnAnotherConnection) {
  NodeCredential node(kSecret, "node1");
  ConnectHello hello = node.Hello(0, kNonceA);
  RunAnswer seen = node.Answer(hello, kNonceB);
  std::string ready_seen = node.Ready(hello, seen);

  RunAnswer fresh = node.Answer(hello, kNonceC);  // `run`'s answer to the replayed hello
  EXPECT_FALSE(node.ReadyProves(hello, fresh, ready_seen));
  EXPECT_NE(node.Keys(hello, fresh).to_agent, node.Keys(hello, seen).to_agent);

  ConnectHello next = node.Hello(0, kNonceC);  // the agent's next hello
  EXPECT_FALSE(node.Proves(next, seen));
  RunAnswer reflected{hello.nonce, hello.proof};  // the hello sent back as an answer
  EXPECT_FALSE(node.Proves(hello, reflected));
}

}  // namespace
}  // namespace topolaunch
