// How one rank's output travels, as pure values.
//
// Each worker's stdout and stderr reach the node's agent on their own
// connection (rank_output_socket.h), never through torchrun's shared
// stdout, so two ranks' lines cannot mix. A connection opens with one hello
// line naming the rank and the stream:
//
//   topolaunch-rank RANK LOCAL_RANK out|err
//
// and the agent sends each line on to `run` on the same stream with the
// label in front: "\x1e" RANK " " LOCAL_RANK " " TEXT. Lines without that
// mark are the node's own (torchrun, the agent, the login shell).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "launch/executor.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// Who wrote a line: a rank (global and local), or the node itself (rank -1).
struct RankLabel {
  int rank = -1;
  int local_rank = -1;
  bool operator==(const RankLabel&) const = default;
};

/// The largest rank a hello or a labelled line may name.
inline constexpr int kMaxRank = 10'000'000;

/// The hello line, with its '\n'.
std::string FormatRankHello(RankLabel label, OutputStream stream);

struct RankHello {
  RankLabel label;
  OutputStream stream = OutputStream::kStdout;
  bool operator==(const RankHello&) const = default;
};

/// Parses a hello line (without its '\n'). nullopt for anything else:
/// other words, numbers out of 0..kMaxRank, a local rank above the rank.
std::optional<RankHello> ParseRankHello(std::string_view line);

/// A rank's line as the agent sends it on (without '\n').
std::string FormatRankLine(RankLabel label, std::string_view text);

struct RankLine {
  RankLabel label;  ///< rank -1: the node's own line
  std::string_view text;
};

/// Splits a line from an agent into its label and text; a line without a
/// well-formed label is the node's own, whole.
RankLine ParseRankLine(std::string_view line);

/// Global ranks as `run --ranks-output` takes them: "0", "0,3", "0-7,16".
class RankSet {
 public:
  /// Errors: kBadInput naming `where`: not a number or a range, a range
  /// out of order, a rank above kMaxRank.
  static Result<RankSet> Parse(std::string_view text, std::string_view where);
  bool Contains(int rank) const;
  /// The highest rank in the set.
  int Highest() const { return ranges_.empty() ? -1 : ranges_.back().second; }

 private:
  std::vector<std::pair<int, int>> ranges_;  ///< sorted, merged, inclusive
};

}  // namespace topolaunch
