#include "launch/connect_back.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text_io.h"

namespace topolaunch {

namespace {

constexpr std::string_view kConnectPrefix = "@topolaunch-connect ";
constexpr std::string_view kHelloPrefix = "@topolaunch-hello ";
constexpr std::string_view kAnswerPrefix = "@topolaunch-run ";
constexpr std::string_view kReadyPrefix = "@topolaunch-ready ";
constexpr std::string_view kPinned = "pinned";
constexpr size_t kHexDigits = 64;
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
  std::optional<long long> value = DecimalNumber(word, low, high);
  return value ? std::optional<int>(static_cast<int>(*value)) : std::nullopt;
}

// A secret, a nonce or a proof: 64 lowercase hex digits.
bool IsHex64(std::string_view word) {
  return word.size() == kHexDigits && word.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool IsHostWord(std::string_view word) {
  if (word.empty() || word.size() > 255) return false;
  for (char c : word)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

bool LooksLikeNumericAddress(std::string_view word) {
  return !word.empty() && word.size() <= 64 && word.find_first_not_of("0123456789abcdefABCDEF.:") == std::string_view::npos;
}

std::string FormatConnectBack(const ConnectBack& where) {
  return fmt::format("{}{} {} {}{}\n", kConnectPrefix, where.port, where.secret, where.pinned ? "pinned " : "",
                     fmt::join(where.addresses, " "));
}

bool IsConnectBack(std::string_view line) { return line.starts_with(kConnectPrefix); }

std::optional<ConnectBack> ParseConnectBack(std::string_view line) {
  if (!IsConnectBack(line)) return std::nullopt;
  std::vector<std::string_view> words = Words(line.substr(kConnectPrefix.size()));
  if (words.size() < 3 || !IsHex64(words[1])) return std::nullopt;
  std::optional<int> port = Number(words[0], 1, 65535);
  if (!port) return std::nullopt;
  ConnectBack where{*port, std::string(words[1]), {}, words[2] == kPinned};
  for (size_t i = where.pinned ? 3 : 2; i < words.size(); ++i) {
    if (!LooksLikeNumericAddress(words[i])) return std::nullopt;
    where.addresses.emplace_back(words[i]);
  }
  if (where.addresses.empty() || (where.pinned && where.addresses.size() != 1)) return std::nullopt;
  return where;
}

std::vector<std::string> AddressesToTry(const ConnectBack& where, std::string_view launch_node) {
  if (!where.pinned && LooksLikeNumericAddress(launch_node)) return {std::string(launch_node)};
  return where.addresses;
}

std::string FormatConnectHello(const ConnectHello& hello) {
  return fmt::format("{}{} {} {} {}\n", kHelloPrefix, hello.task, hello.host, hello.nonce, hello.proof);
}

std::optional<ConnectHello> ParseConnectHello(std::string_view line) {
  if (!line.starts_with(kHelloPrefix)) return std::nullopt;
  std::vector<std::string_view> words = Words(line.substr(kHelloPrefix.size()));
  if (words.size() != 4 || !IsHostWord(words[1]) || !IsHex64(words[2]) || !IsHex64(words[3])) return std::nullopt;
  std::optional<int> task = Number(words[0], 0, kMaxTask);
  if (!task) return std::nullopt;
  return ConnectHello{*task, std::string(words[1]), std::string(words[2]), std::string(words[3])};
}

std::string FormatRunAnswer(const RunAnswer& answer) {
  return fmt::format("{}{} {}\n", kAnswerPrefix, answer.nonce, answer.proof);
}

std::optional<RunAnswer> ParseRunAnswer(std::string_view line) {
  if (!line.starts_with(kAnswerPrefix)) return std::nullopt;
  std::vector<std::string_view> words = Words(line.substr(kAnswerPrefix.size()));
  if (words.size() != 2 || !IsHex64(words[0]) || !IsHex64(words[1])) return std::nullopt;
  return RunAnswer{std::string(words[0]), std::string(words[1])};
}

std::string FormatAgentReady(std::string_view proof) { return fmt::format("{}{}\n", kReadyPrefix, proof); }

std::optional<std::string> ParseAgentReady(std::string_view line) {
  if (!line.starts_with(kReadyPrefix)) return std::nullopt;
  std::vector<std::string_view> words = Words(line.substr(kReadyPrefix.size()));
  if (words.size() != 1 || !IsHex64(words[0])) return std::nullopt;
  return std::string(words[0]);
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
