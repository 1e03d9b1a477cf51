// What a rank and an agent send: the hello on a rank's connection, the
// labelled lines `run` reads from every agent, `--ranks-output`, and the
// splitting of a rank's bytes into lines (kSplit: nothing may be lost).
#include <string>

#include "fuzz/fuzz_check.h"
#include "launch/executor.h"
#include "launch/rank_lines.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  std::string_view text = fuzz::AsText(data, size);
  if (std::optional<RankHello> hello = ParseRankHello(text)) {
    std::string back = FormatRankHello(hello->label, hello->stream);
    fuzz::Check(ParseRankHello(std::string_view(back).substr(0, back.size() - 1)) == hello, "a hello round-trips");
  }
  RankLine line = ParseRankLine(text);
  if (line.label.rank >= 0) {
    fuzz::Check(line.label.local_rank <= line.label.rank && line.label.rank <= kMaxRank, "labels are bounded");
    fuzz::Check(FormatRankLine(line.label, line.text).size() <= text.size(), "the label is no longer than what was read");
  } else {
    fuzz::Check(line.text == text, "a line without a label is kept whole");
  }
  if (Result<RankSet> set = RankSet::Parse(text, "--ranks-output"); set.ok())
    fuzz::Check(set->Contains(set->Highest()) && set->Highest() <= kMaxRank, "a rank set holds its highest rank");
  else
    fuzz::Check(!set.error().problems.empty(), "an error names at least one problem");

  // The bytes in chunks of varying size through a small split limit: each
  // piece is bounded, and the pieces without their markers and line ends
  // give back every byte that was not a line end.
  constexpr size_t kLimit = 16;
  LineSplitter splitter(kLimit, LineSplitter::LongLines::kSplit);
  std::string joined;
  std::string_view marker = LineSplitter::kSplitMarker;
  auto emit = [&](std::string_view piece) {
    if (piece.ends_with(marker)) piece.remove_suffix(marker.size());
    fuzz::Check(piece.size() <= kLimit, "a piece stays within the limit");
    joined.append(piece);
  };
  for (size_t at = 0, chunk = 1; at < text.size(); at += chunk, chunk = chunk % 7 + 1)
    splitter.Feed(text.substr(at, chunk), emit);
  splitter.Flush(emit);
  std::string expected;
  for (char c : text)
    if (c != '\n' && c != '\r') expected += c;
  fuzz::Check(joined == expected, "splitting loses no byte");
  return 0;
}
