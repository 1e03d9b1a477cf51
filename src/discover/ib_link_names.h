// The names infiniband-diags print for PortInfo codes.
//
// The live libibnetdisc walk and the cache reader see raw PortInfo fields; a
// text dump carries the names `ibnetdiscover` printed for them. Both must end
// up with the same strings, so this file turns the raw codes into exactly the
// names ibnetdiscover (infiniband-diags 44) prints, except that widths use an
// uppercase X ("4X", as the model and topology.json spell them) and an unknown
// code gives "" (unknown) instead of "???".
#pragma once

#include <string_view>

namespace topolaunch {

/// LinkWidthActive code: 1 -> "1X", 2 -> "4X", 4 -> "8X", 8 -> "12X",
/// 16 -> "2X"; "" for any other code.
std::string_view IbLinkWidthName(unsigned width_code);

/// The link speed name ibnetdiscover prints. `speed_code` is
/// LinkSpeedActive (1 SDR, 2 DDR, 4 QDR); `ext_speed_code` is
/// LinkSpeedExtActive (1 FDR, 2 EDR, 4 HDR, 8 NDR, 32 XDR), to be passed as 0
/// when the port's capability mask lacks IsExtendedSpeedsSupported; `fdr10` is
/// the FDR10 bit of Mellanox's extended PortInfo. As in ibnetdiscover, FDR10
/// is only reported on a port whose basic speed is QDR, and an extended code
/// wins over the basic one. "" when the codes name no known speed.
std::string_view IbLinkSpeedName(unsigned speed_code, unsigned ext_speed_code, bool fdr10);

/// PortState code: 1 "Down", 2 "Init", 3 "Armed", 4 "Active"; "" otherwise
/// (0 is "no state change", 5 "ActiveDefer" is transient).
std::string_view IbPortStateName(unsigned state_code);

}  // namespace topolaunch
