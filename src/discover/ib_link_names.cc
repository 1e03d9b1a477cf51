#include "discover/ib_link_names.h"

namespace topolaunch {

std::string_view IbLinkWidthName(unsigned width_code) {
  switch (width_code) {
    case 1: return "1X";
    case 2: return "4X";
    case 4: return "8X";
    case 8: return "12X";
    case 16: return "2X";
  }
  return "";
}

namespace {

std::string_view BasicSpeedName(unsigned speed_code) {
  switch (speed_code) {
    case 1: return "SDR";
    case 2: return "DDR";
    case 4: return "QDR";
  }
  return "";
}

}  // namespace

std::string_view IbLinkSpeedName(unsigned speed_code, unsigned ext_speed_code, bool fdr10) {
  constexpr unsigned kQdr = 4;
  if (ext_speed_code == 0) {
    // FDR10 runs at the QDR signalling code; the Mellanox bit tells them apart.
    if (speed_code == kQdr && fdr10) return "FDR10";
    return BasicSpeedName(speed_code);
  }
  switch (ext_speed_code) {
    case 1: return "FDR";
    case 2: return "EDR";
    case 4: return "HDR";
    case 8: return "NDR";
    case 32: return "XDR";
  }
  return "";
}

std::string_view IbPortStateName(unsigned state_code) {
  switch (state_code) {
    case 1: return "Down";
    case 2: return "Init";
    case 3: return "Armed";
    case 4: return "Active";
  }
  return "";
}

}  // namespace topolaunch
