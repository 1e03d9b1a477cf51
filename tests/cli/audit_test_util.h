// Helpers for the audit tests: faults written into a generated net file, and
// the findings of an audit document reduced to what a test asserts on.
#pragma once

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "support/test_paths.h"

namespace topolaunch::testing {

/// Writes `text` to `dir`/`name` and returns the path.
inline std::string WriteNet(const TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.File(name)) << text;
  return dir.File(name);
}

/// The net file with the cable of the CA described `ca_description` ("node03
/// mlx5_0") set to `token` ("1xHDR") on both of its ends.
inline std::string SetHostLinkToken(const std::string& netfile, const std::string& ca_description,
                                    const std::string& token) {
  std::istringstream in(netfile);
  std::string line, out, quoted = "\"" + ca_description + "\"";
  bool in_ca = false;
  while (std::getline(in, line)) {
    if (line.rfind("Switch", 0) == 0 || line.rfind("Ca", 0) == 0) in_ca = line.find(quoted) != std::string::npos;
    bool port_line = !line.empty() && line[0] == '[';
    if (port_line && (in_ca || line.find(quoted) != std::string::npos)) {
      size_t space = line.find_last_of(" \t");
      line = line.substr(0, space + 1) + token;
    }
    out += line + "\n";
  }
  return out;
}

/// ibsim's node id ("H-98039b0300800020", "S-...") of the node described so.
inline std::string NodeId(const std::string& netfile, const std::string& description) {
  std::istringstream in(netfile);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Switch", 0) != 0 && line.rfind("Ca", 0) != 0) continue;
    if (line.find("\"" + description + "\"") == std::string::npos) continue;
    size_t open = line.find('"');
    return line.substr(open + 1, line.find('"', open + 1) - open - 1);
  }
  return "";
}

/// severity, check, host, switch name.
using FindingKey = std::tuple<std::string, std::string, std::string, std::string>;

/// The findings of a topolaunch.audit/1 document at warning or above.
inline std::set<FindingKey> SeriousFindings(const nlohmann::json& doc) {
  std::set<FindingKey> out;
  for (const nlohmann::json& f : doc.at("findings")) {
    std::string severity = f.at("severity");
    if (severity == "info") continue;
    out.insert({severity, f.at("check"), f.value("host", ""), f.value("switch_name", "")});
  }
  return out;
}

}  // namespace topolaunch::testing
