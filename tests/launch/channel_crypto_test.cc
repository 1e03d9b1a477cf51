// The connect-back channel's cryptography (channel_crypto.h) with the real
// libcrypto: HMAC against RFC 4231's vectors, and records that come back
// only as they were sealed, in order, under their key.
#include "launch/channel_crypto.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

class ChannelCrypto : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(LoadChannelCrypto().ok()) << LoadChannelCrypto().error().Message(); }
};

ChannelKey KeyOf(char fill) {
  ChannelKey key;
  key.fill(static_cast<unsigned char>(fill));
  return key;
}

// RFC 4231, test cases 1 and 2.
TEST_F(ChannelCrypto, HmacIsHmacSha256) {
  EXPECT_EQ(KeyHex(Hmac(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(KeyHex(Hmac("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_F(ChannelCrypto, KeysAndRandomHex) {
  ChannelKey key = Hmac("k", "m");
  EXPECT_EQ(KeyFromHex(KeyHex(key)), key);
  EXPECT_FALSE(KeyFromHex(std::string(63, 'a')));
  EXPECT_FALSE(KeyFromHex(std::string(64, 'A')));
  Result<std::string> a = RandomHex(32), b = RandomHex(32);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 64u);
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(SameBytes("abc", "abc"));
  EXPECT_FALSE(SameBytes("abc", "abd"));
  EXPECT_FALSE(SameBytes("abc", "ab"));
}

TEST_F(ChannelCrypto, RecordsOpenAsSealedWhateverThePieces) {
  RecordSealer seal(KeyOf('k'));
  std::string wire;
  std::string big(200'000, 'b');  // longer than one record
  seal.Seal("first line\n", wire);
  seal.Seal("", wire);
  seal.Seal(big, wire);
  EXPECT_EQ(wire.find("first line"), std::string::npos) << "plaintext on the wire";
  RecordOpener open(KeyOf('k'));
  std::string plain;
  for (size_t at = 0; at < wire.size(); at += 7777) ASSERT_TRUE(open.Feed(std::string_view(wire).substr(at, 7777), plain));
  EXPECT_EQ(plain, "first line\n" + big);
  EXPECT_EQ(open.held(), 0u);
}

TEST_F(ChannelCrypto, AlteredReplayedOrForeignRecordsEndTheChannel) {
  RecordSealer seal(KeyOf('k'));
  std::string one, two;
  seal.Seal("stop nothing\n", one);
  seal.Seal("run rm -rf\n", two);
  std::string plain;
  {
    std::string altered = one;
    altered[10] ^= 1;
    RecordOpener open(KeyOf('k'));
    EXPECT_FALSE(open.Feed(altered, plain));
    EXPECT_FALSE(open.Feed(two, plain)) << "nothing after a bad record is trusted";
    EXPECT_EQ(plain, "");
  }
  {
    RecordOpener open(KeyOf('k'));
    EXPECT_TRUE(open.Feed(one, plain));
    EXPECT_FALSE(open.Feed(one, plain)) << "a record replayed";
    EXPECT_EQ(plain, "stop nothing\n");
  }
  plain.clear();
  {
    RecordOpener open(KeyOf('k'));
    EXPECT_FALSE(open.Feed(two, plain)) << "records reordered (one dropped)";
  }
  {
    RecordOpener open(KeyOf('o'));
    EXPECT_FALSE(open.Feed(one, plain)) << "sealed under another key";
  }
  {
    RecordOpener open(KeyOf('k'));
    std::string longer = one;
    longer[1] = 0x10;  // the length says 1 MiB: more than any record
    EXPECT_FALSE(open.Feed(longer, plain));
  }
  EXPECT_EQ(plain, "");
}

}  // namespace
}  // namespace topolaunch
