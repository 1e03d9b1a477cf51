#include "launch/connect_back_auth.h"

#include <fmt/format.h>

namespace topolaunch {

NodeCredential::NodeCredential(std::string_view secret, std::string_view host)
    : host_(host), key_(Hmac(secret, fmt::format("topolaunch node\n{}", host))) {}

std::string NodeCredential::Mac(std::string_view label, const ConnectHello& hello, std::string_view run_nonce) const {
  return KeyHex(Hmac(KeyBytes(key_), fmt::format("{}\n{}\n{}\n{}\n{}", label, hello.task, hello.host, hello.nonce, run_nonce)));
}

ConnectHello NodeCredential::Hello(int task, std::string nonce) const {
  ConnectHello hello{task, host_, std::move(nonce), ""};
  hello.proof = Mac("hello", hello, "");
  return hello;
}

bool NodeCredential::Proves(const ConnectHello& hello) const {
  return hello.host == host_ && SameBytes(hello.proof, Mac("hello", hello, ""));
}

RunAnswer NodeCredential::Answer(const ConnectHello& hello, std::string nonce) const {
  RunAnswer answer{std::move(nonce), ""};
  answer.proof = Mac("run", hello, answer.nonce);
  return answer;
}

bool NodeCredential::Proves(const ConnectHello& hello, const RunAnswer& answer) const {
  return hello.host == host_ && answer.nonce != hello.nonce && SameBytes(answer.proof, Mac("run", hello, answer.nonce));
}

std::string NodeCredential::Ready(const ConnectHello& hello, const RunAnswer& answer) const {
  return Mac("ready", hello, answer.nonce);
}

bool NodeCredential::ReadyProves(const ConnectHello& hello, const RunAnswer& answer, std::string_view proof) const {
  return hello.host == host_ && SameBytes(proof, Mac("ready", hello, answer.nonce));
}

ChannelKeys NodeCredential::Keys(const ConnectHello& hello, const RunAnswer& answer) const {
  auto key = [&](std::string_view label) {
    return Hmac(KeyBytes(key_), fmt::format("{}\n{}\n{}\n{}\n{}", label, hello.task, hello.host, hello.nonce, answer.nonce));
  };
  return {key("to agent"), key("to run")};
}

}  // namespace topolaunch
