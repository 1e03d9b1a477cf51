#include "discover/local_host.h"

#include <unistd.h>

namespace topolaunch {

std::string LocalShortHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  std::string host = name;
  return host.substr(0, host.find('.'));
}

}  // namespace topolaunch
