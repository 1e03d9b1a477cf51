// The fabric read through libibnetdisc: a live walk over libibumad (a real
// HCA, or ibsim under ibsim-run) or a cache file written by
// `ibnetdiscover --cache`. Only the .cc includes <infiniband/ibnetdisc.h>.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "topolaunch/sources.h"

namespace topolaunch {

inline constexpr int kDefaultMaxSmps = 4;

struct LiveFabricOptions {
  std::string ca;         ///< HCA name ("mlx5_0"); empty = the first one
  int port = 0;           ///< HCA port; 0 = the first active one
  std::chrono::milliseconds timeout{60'000};  ///< whole walk
  std::chrono::milliseconds mad_timeout{0};   ///< per SMP; 0 = libibnetdisc's default
  int max_hops = 0;                           ///< 0 = no limit
  /// SMPs in flight during the walk (ibnetdiscover's --outstanding_smps,
  /// libibnetdisc's max_smps). A real walk waits on round trips, not on the
  /// CPU: every directed-route SMP crosses up to a dozen switches and each
  /// switch's firmware (the SMA) answers it, tens of microseconds, so the
  /// walk's time is SMPs x round trip / SMPs in flight. libibnetdisc and
  /// ibnetdiscover keep 2 in flight. The default, 4, is OpenSM's own
  /// max_wire_smps: what the subnet manager already sends on every fabric,
  /// so every switch's SMA is known to keep up with it; it halves the walk.
  int max_smps = kDefaultMaxSmps;
  /// Called with the number of nodes found. libibnetdisc (44) offers no hook
  /// inside the walk, so this comes once, when the walk is over; may be empty.
  std::function<void(int nodes_found)> progress;
  /// Called about once a second while the walk runs, with the time spent so
  /// far, so a long walk can show it is alive; may be empty. It runs on the
  /// watchdog's thread (core/deadline_watchdog.h), not the caller's.
  std::function<void(std::chrono::milliseconds elapsed)> still_walking;
  /// Called, on the watchdog's thread, with the kTimeout error when the walk
  /// runs past `timeout`. The walk cannot be cancelled and holds the calling
  /// thread, so this must end the process: report the error, flush, then
  /// std::_Exit, not exit() (under ibsim-run, umad2sim's atexit handler
  /// joins its receive thread while holding the lock that thread needs
  /// whenever a port is still open: exit() would hang). Empty, or if it
  /// returns: the error goes to stderr and the process _Exits with status 3.
  std::function<void(const Error& error)> past_deadline;
};

/// Walks the fabric from the local HCA port with ibnd_discover_fabric, on
/// the calling thread, as `ibnetdiscover` does (a walk on a thread of its own
/// was 90-155 ms slower on a 4,096-host fabric: ibnetdisc_fabric_source.cc).
/// libibnetdisc gives no way to cancel a walk, so a watchdog thread keeps its
/// deadline, and ends the process when it passes (options.past_deadline).
class IbnetdiscFabricSource : public FabricSource {
 public:
  explicit IbnetdiscFabricSource(LiveFabricOptions options) : options_(std::move(options)) {}
  /// Waits for libibnetdisc's fabric to be freed (started by LoadFabric).
  ~IbnetdiscFabricSource() override;
  /// kUnavailable when there is no HCA/umad (or, under ibsim-run, ibsim is not
  /// running). A walk that runs past options.timeout does not return: see
  /// LiveFabricOptions::past_deadline. Under ibsim each walk so ended also
  /// keeps one of ibsim's 10 client slots until ibsim restarts.
  Result<Fabric> LoadFabric() override;

 private:
  LiveFabricOptions options_;
  std::thread releasing_;
};

/// Loads a libibnetdisc cache file with ibnd_load_fabric.
class IbnetdiscCacheFabricSource : public FabricSource {
 public:
  explicit IbnetdiscCacheFabricSource(std::string path) : path_(std::move(path)) {}
  /// kBadInput naming the file when it is missing or not a valid cache.
  /// The cache keeps no Mellanox extended PortInfo, so an FDR10 link reads
  /// back as QDR (as `ibnetdiscover --load-cache` prints it too).
  Result<Fabric> LoadFabric() override;

 private:
  std::string path_;
};

/// True when `head` (the first bytes of a file) starts with the libibnetdisc
/// cache magic, so `--fabric FILE` can tell a cache from a text dump.
bool HasIbnetdiscCacheMagic(std::string_view head);

}  // namespace topolaunch
