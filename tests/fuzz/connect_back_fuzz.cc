// What crosses the network when agents connect back (connect_back.h): the
// line every agent reads from the step's stdin, the handshake's lines any
// program that reaches `run`'s port (or that an agent reaches) may send, the
// sealed records after it (channel_crypto.h), and the agents' frames.
#include <string>

#include "fuzz/fuzz_check.h"
#include "launch/channel_crypto.h"
#include "launch/connect_back.h"

namespace {

template <typename T, typename Format, typename Parse>
void CheckRoundTrip(const std::optional<T>& read, Format format, Parse parse, const char* what) {
  if (!read) return;
  std::string back = format(*read);
  topolaunch::fuzz::Check(!back.empty() && back.back() == '\n' && parse(std::string_view(back).substr(0, back.size() - 1)) == read,
                          what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  std::string_view text = fuzz::AsText(data, size);
  if (std::optional<ConnectBack> where = ParseConnectBack(text)) {
    fuzz::Check(where->port > 0 && where->port < 65536 && where->secret.size() == 64 && !where->addresses.empty() &&
                    (!where->pinned || where->addresses.size() == 1),
                "an accepted line has a port, a whole secret and an address (one when pinned)");
    CheckRoundTrip(where, FormatConnectBack, ParseConnectBack, "the connect line round-trips");
  }
  std::optional<ConnectHello> hello = ParseConnectHello(text);
  if (hello)
    fuzz::Check(hello->task >= 0 && !hello->host.empty() && hello->nonce.size() == 64 && hello->proof.size() == 64,
                "an accepted hello names a task, a host, a nonce and a proof");
  CheckRoundTrip(hello, FormatConnectHello, ParseConnectHello, "the hello round-trips");
  CheckRoundTrip(ParseRunAnswer(text), FormatRunAnswer, ParseRunAnswer, "the answer round-trips");
  CheckRoundTrip(ParseAgentReady(text), [](const std::string& p) { return FormatAgentReady(p); }, ParseAgentReady,
                 "the ready line round-trips");
  AgentFrame frame = ParseAgentFrame(text);
  if (frame.kind == AgentFrame::Kind::kOutput) {
    std::string back = FormatOutputFrame(frame.stream, frame.text);
    fuzz::Check(back.substr(0, back.size() - 1) == text, "an output frame is its line, whole");
  } else if (frame.kind == AgentFrame::Kind::kExit) {
    fuzz::Check(frame.status >= 0 && frame.status <= 255, "an exit status is a status");
  }
  // Bytes from the wire as records: nothing opens without the key, and
  // nothing is held past the longest record.
  if (LoadChannelCrypto().ok()) {
    RecordOpener open(Hmac("fuzz", "key"));
    std::string plain;
    size_t half = text.size() / 2;
    bool sound = open.Feed(text.substr(0, half), plain) && open.Feed(text.substr(half), plain);
    fuzz::Check(plain.empty(), "bytes not sealed under the key opened");
    fuzz::Check(!sound || open.held() <= 4 + RecordSealer::kMaxPlain + 16, "a record longer than any is refused");
  }
  return 0;
}
