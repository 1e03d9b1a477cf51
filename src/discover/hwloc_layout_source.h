// A host's layout read through hwloc: live, or from an XML export. Only the
// .cc includes <hwloc.h>; both paths share one conversion to HostLayout.
#pragma once

#include <chrono>
#include <string>

#include "topolaunch/sources.h"

namespace topolaunch {

class HwlocLayoutSource : public HostLayoutSource {
 public:
  /// This machine, with I/O devices; GPU facts enriched through NVML when a
  /// driver is present (see nvml_probe.h). Loaded on a thread of its own
  /// and waited for `timeout`: a wedged GPU driver or a sysfs file that
  /// never answers is kTimeout, not a hang. The thread is then left behind,
  /// blocked, so the caller should exit soon (with std::_Exit: exit handlers
  /// can wait on what it holds).
  static HwlocLayoutSource Live(std::chrono::milliseconds timeout = kLiveLoadTimeout);
  /// An XML file exported by lstopo/hwloc (v1 or v2 format).
  static HwlocLayoutSource FromXmlFile(std::string path);
  /// XML held in memory (gathered from a remote node); `name` is used in errors.
  static HwlocLayoutSource FromXmlString(std::string xml, std::string name);

  /// XML is read by libhwloc in a child process (contained_call.h): a file
  /// that crashes libhwloc, or keeps it busy past 60 s, is kBadInput naming
  /// the file, and this process goes on.
  Result<HostLayout> LoadLayout() override;
  bool Forks() const override { return kind_ != Kind::kLive; }

  static constexpr std::chrono::milliseconds kLiveLoadTimeout{60'000};

 private:
  enum class Kind { kLive, kXmlFile, kXmlString };
  static constexpr std::chrono::milliseconds kXmlLoadTimeout{60'000};
  HwlocLayoutSource(Kind kind, std::string input, std::string name, std::chrono::milliseconds timeout)
      : kind_(kind), input_(std::move(input)), name_(std::move(name)), timeout_(timeout) {}
  Result<HostLayout> LoadLiveBounded() const;
  Result<HostLayout> LoadXmlContained() const;
  Result<HostLayout> LoadXmlInProcess() const;
  Kind kind_;
  std::string input_;
  std::string name_;
  std::chrono::milliseconds timeout_;
};

/// This machine's topology (with I/O devices) exported as hwloc XML, for the
/// live-versus-XML contract and for gathering layouts from remote nodes.
Result<std::string> ExportLocalHwlocXml();

}  // namespace topolaunch
