// hwloc XML exports copied from hundreds of nodes, through the layout
// source's own interface: libhwloc reads them in a child process, so a file
// that crashes libhwloc must come back as an error, never take us down.
// (Coverage of libhwloc itself is not seen from here: it runs in the child.)
#include "discover/hwloc_layout_source.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  Result<HostLayout> layout =
      HwlocLayoutSource::FromXmlString(std::string(fuzz::AsText(data, size)), "fuzz.xml").LoadLayout();
  if (!layout.ok()) fuzz::Check(!layout.error().problems.empty(), "an error names at least one problem");
  return 0;
}
