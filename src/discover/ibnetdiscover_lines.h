// The line grammar of ibnetdiscover's default output, which is also ibsim's
// net-file format. Each function reads one line (CR, BOM and leading blanks
// already removed) into views of that line; the dump parser
// (ibnetdiscover_parser.cc) turns the lines into a fabric and owns the
// file:line bookkeeping, so errors here carry only the "what".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "topolaunch/fabric.h"
#include "topolaunch/result.h"

namespace topolaunch::ibnet {

enum class LineKind {
  kBlank,
  kComment,      ///< "# ..."
  kAssignment,   ///< "vendid=0x2c9", "switchguid=0x..(..)", ibsim's "width=4"
  kRecord,       ///< "Switch 36 ...", "Ca 2 ...", ibsim's "Hca 2 ...", "Rt 1 ..."
  kPort,         ///< "[12] ..."
  kSection,      ///< "Chassis 3 (guid ..)", "Non-Chassis Nodes", "Hostname: x"
  kDirective,    ///< ibsim's "do <command>" (ignored)
  kUnsupported,  ///< ibsim's "include" and "@alias" port lines
  kOther,        ///< anything else: junk before the first record, garbage after
};

/// What kind of line this is, from its first word only.
LineKind ClassifyLine(std::string_view line);

/// "key=value": the key and everything after '=' up to the first blank.
struct Assignment {
  std::string_view key;
  std::string_view value;
};
Assignment SplitAssignment(std::string_view line);

/// The value of sysimgguid=, caguid=, rtguid= ("0x2c903007b78b0") or, with
/// `with_port_guid`, of switchguid= ("0xb8599f0300fc6de4(b8599f0300fc6de4)",
/// the parentheses optional). Errors say what was expected.
struct GuidValue {
  Guid guid = 0;
  std::optional<Guid> port_guid;
};
Result<GuidValue> ParseGuidValue(std::string_view value, bool with_port_guid);

/// {"4X", "HDR"} from "4xHDR"; {"", ""} for an empty token and for
/// ibnetdiscover's "??"/"???" (a width or speed it could not name); nullopt
/// for anything else (a line cut in the middle of the token).
std::optional<std::pair<std::string, std::string>> ParseWidthSpeed(std::string_view token);

/// `Switch 36 "S-f452.." # "MF0;ib5:SX6036/U1" enhanced port 0 lid 128 lmc 0`
/// `Ca 2 "H-0008.." # "node01 mlx5_0"`; ibsim also accepts `Hca 2 "Hca1"`.
struct RecordLine {
  NodeType type = NodeType::kCa;
  int num_ports = 0;
  std::string_view id;                          ///< between the quotes
  std::optional<std::string_view> description;  ///< nullopt: no comment at all
  int lid = 0;                                  ///< switches: port 0 LID
};
/// Errors (kBadInput, empty `where`): a wrong type word, a missing or
/// out-of-range port count, an unterminated id or description (a cut line),
/// an `ibnetdiscover -l` list line.
Result<RecordLine> ParseRecordLine(std::string_view line);

/// `[12] "H-0002c9.."[1](2c9..) # "node01 mlx5_0" lid 4 4xQDR` (switch) or
/// `[1](2c9..) "S-0002.."[41] # lid 14 lmc 0 "leaf01" lid 13 4xHDR` (CA).
struct PortLine {
  int port = 0;
  Guid port_guid = 0;  ///< "(..)" after the local port; 0 if absent
  std::string_view remote_id;
  int remote_port = 1;           ///< ibsim's default when "[n]" is omitted
  Guid remote_port_guid = 0;     ///< "(..)" after the remote port (CA peers)
  int lid = 0;                   ///< this port's LID ("# lid N lmc M", CA lines)
  int remote_lid = 0;            ///< the peer's LID, from the comment
  std::string_view width_speed;  ///< "4xHDR", "4x???"; empty without comment
};
/// Errors: a missing "[port]", an unterminated id, a comment that starts
/// like ibnetdiscover's but is cut short. Free-form comments are ignored.
Result<PortLine> ParsePortLine(std::string_view line);

/// The GUID in an ibnetdiscover node id ("S-0002c90300a1b2c3", "H-..",
/// "R-.."): nullopt when the id is not of that shape (an ibsim name such
/// as "Switch1"); an Error when it has the prefix but not 1-16 hex digits.
Result<std::optional<Guid>> GuidFromNodeId(std::string_view id);

/// Whether a line that is not part of a topology dump looks like the
/// `ibnetdiscover -p` ports report ("CA  44  1 0x78e7.. 4x QDR - SW ...") or
/// its `-s` progress lines ("DR path slid 0; ...").
bool LooksLikePortsReport(std::string_view line);

}  // namespace topolaunch::ibnet
