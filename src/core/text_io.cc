#include "core/text_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace topolaunch {

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::kBadInput, path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Error(ErrorCode::kBadInput, path, std::string("cannot read: ") + std::strerror(errno));
  return std::move(buffer).str();
}

}  // namespace topolaunch
