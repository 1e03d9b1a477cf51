// The interfaces through which discovery reaches the world.
//
// Each has one real implementation per way of reading (live hardware, a file
// twin of it), all converging on the same model, so the CLI picks a source
// and the rest of the program cannot tell which one it was.
#pragma once

#include "topolaunch/fabric.h"
#include "topolaunch/layout.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// Produces a whole fabric: live libibnetdisc walk, libibnetdisc cache file,
/// ibnetdiscover text dump.
class FabricSource {
 public:
  virtual ~FabricSource() = default;
  /// Reads the fabric. Errors: kBadInput for a malformed file (naming file and
  /// line), kUnavailable for a missing HCA or umad, kTimeout when the walk
  /// exceeded its time limit.
  virtual Result<Fabric> LoadFabric() = 0;
};

/// Produces one host's layout: live hwloc, an hwloc XML file, XML gathered
/// from another node.
class HostLayoutSource {
 public:
  virtual ~HostLayoutSource() = default;
  /// Reads the layout. Errors: kBadInput for invalid XML (naming the file),
  /// kUnavailable when hwloc cannot load the local machine.
  virtual Result<HostLayout> LoadLayout() = 0;
  /// True when LoadLayout forks a child process (to contain a library that
  /// may crash on hostile input): it is then not loaded while another thread
  /// of this process is busy (AssembleTopology says why).
  virtual bool Forks() const { return false; }
};

}  // namespace topolaunch
