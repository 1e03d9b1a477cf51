#include "launch/connect_back.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace topolaunch {

namespace {

constexpr std::string_view kConnectPrefix = "@topolaunch-connect ";
constexpr std::string_view kGreetingPrefix = "@topolaunch-run ";
constexpr std::string_view kHelloPrefix = "@topolaunch-hello ";
constexpr size_t kTokenDigits = 64;
constexpr size_t kHalf = kTokenDigits / 2;
constexpr int kMaxTask = 10'000'000;

std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  while (!text.empty()) {
    size_t space = text.find(' ');
    std::string_view word = text.substr(0, space);
    if (!word.empty()) words.push_back(word);
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return words;
}

std::optional<int> Number(std::string_view word, int low, int high) {
  int value = 0;
  auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (error != std::errc() || end != word.data() + word.size() || value < low || value > high) return std::nullopt;
  return value;
}

bool IsToken(std::string_view word) {
  return word.size() == kTokenDigits &&
         word.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool IsAddress(std::string_view word) {
  return !word.empty() && word.size() <= 64 && word.find_first_not_of("0123456789abcdefABCDEF.:") == std::string_view::npos;
}

bool IsHostWord(std::string_view word) {
  if (word.empty() || word.size() > 255) return false;
  for (char c : word)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

std::string FormatConnectBack(const ConnectBack& where) {
  return fmt::format("{}{} {} {}\n", kConnectPrefix, where.port, where.token, fmt::join(where.addresses, " "));
}

bool IsConnectBack(std::string_view line) { return line.starts_with(kConnectPrefix); }

std::optional<ConnectBack> ParseConnectBack(std::string_view line) {
  if (!IsConnectBack(line)) return std::nullopt;
  std::vector<std::string_view> words = Words(line.substr(kConnectPrefix.size()));
  if (words.size() < 3 || !IsToken(words[1])) return std::nullopt;
  std::optional<int> port = Number(words[0], 1, 65535);
  if (!port) return std::nullopt;
  ConnectBack where{*port, std::string(words[1]), {}};
  for (size_t i = 2; i < words.size(); ++i) {
    if (!IsAddress(words[i])) return std::nullopt;
    where.addresses.emplace_back(words[i]);
  }
  return where;
}

std::vector<std::string> AddressesToTry(const ConnectBack& where, std::string_view launch_node) {
  if (!launch_node.empty() && IsAddress(launch_node)) return {std::string(launch_node)};
  return where.addresses;
}

std::string FormatRunGreeting(std::string_view token) {
  return fmt::format("{}{}\n", kGreetingPrefix, token.substr(0, kHalf));
}

bool IsRunGreeting(std::string_view line, std::string_view token) {
  return token.size() == kTokenDigits && line.starts_with(kGreetingPrefix) &&
         SameToken(line.substr(kGreetingPrefix.size()), token.substr(0, kHalf));
}

std::string FormatConnectHello(const ConnectHello& hello) {
  std::string_view token = hello.token;
  return fmt::format("{}{} {} {}\n", kHelloPrefix, token.substr(std::min(token.size(), kHalf)), hello.task, hello.host);
}

bool ParseConnectHello(std::string_view line, std::string_view token, ConnectHello& hello) {
  if (!line.starts_with(kHelloPrefix) || token.size() != kTokenDigits) return false;
  std::vector<std::string_view> words = Words(line.substr(kHelloPrefix.size()));
  if (words.size() != 3 || !SameToken(words[0], token.substr(kHalf)) || !IsHostWord(words[2])) return false;
  std::optional<int> task = Number(words[1], 0, kMaxTask);
  if (!task) return false;
  hello = ConnectHello{std::string(token), *task, std::string(words[2])};
  return true;
}

bool SameToken(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ |= static_cast<unsigned char>(a[i] ^ b[i]);
  return differ == 0;
}

std::string FormatOutputFrame(OutputStream stream, std::string_view text) {
  std::string frame(stream == OutputStream::kStdout ? "o " : "e ");
  frame.append(text);
  frame += '\n';
  return frame;
}

std::string FormatExitFrame(int status) { return fmt::format("x {}\n", status); }

AgentFrame ParseAgentFrame(std::string_view line) {
  AgentFrame frame;
  if (line.size() < 2 || line[1] != ' ') return frame;
  std::string_view rest = line.substr(2);
  if (line[0] == 'o' || line[0] == 'e') {
    frame.kind = AgentFrame::Kind::kOutput;
    frame.stream = line[0] == 'o' ? OutputStream::kStdout : OutputStream::kStderr;
    frame.text = rest;
  } else if (line[0] == 'x') {
    if (std::optional<int> status = Number(rest, 0, 255)) {
      frame.kind = AgentFrame::Kind::kExit;
      frame.status = *status;
    }
  }
  return frame;
}

}  // namespace topolaunch
