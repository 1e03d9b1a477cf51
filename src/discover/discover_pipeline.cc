#include "discover/discover_pipeline.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "core/text_io.h"
#include "discover/assemble_topology.h"
#include "discover/fabric_merge.h"
#include "discover/hwloc_layout_source.h"
#include "discover/ibnetdiscover_parser.h"
#include "discover/json_layout_source.h"
#include "discover/local_host.h"

namespace topolaunch {

namespace {

namespace fs = std::filesystem;

// An ibnetdiscover text dump read from a file.
class IbnetdiscoverDumpFabricSource : public FabricSource {
 public:
  IbnetdiscoverDumpFabricSource(std::string path, std::string text, const DiscoverOptions& options)
      : path_(std::move(path)), text_(std::move(text)), options_(options) {}
  Result<Fabric> LoadFabric() override {
    Result<Fabric> fabric = ParseIbnetdiscover(text_, path_);
    if (fabric.ok() && options_.note)
      for (const std::string& note : fabric->notes) options_.note(note);
    return fabric;
  }

 private:
  std::string path_;
  std::string text_;
  const DiscoverOptions& options_;
};

// --fabric auto on a machine without an HCA: the fabric is simply absent.
class NoteMissingFabric : public FabricSource {
 public:
  NoteMissingFabric(FabricSource& live, const DiscoverOptions& options) : live_(live), options_(options) {}
  Result<Fabric> LoadFabric() override {
    Result<Fabric> fabric = live_.LoadFabric();
    if (fabric.ok() || fabric.error().code != ErrorCode::kUnavailable) return fabric;
    if (options_.note)
      options_.note(fmt::format("no InfiniBand fabric ({}); writing the host layout only. "
                                "Use --fabric FILE to read an ibnetdiscover dump.",
                                fabric.error().Message()));
    Fabric empty;
    empty.source = "none";
    return empty;
  }

 private:
  FabricSource& live_;
  const DiscoverOptions& options_;
};

Result<std::unique_ptr<FabricSource>> OpenFabricFile(const std::string& path, const DiscoverOptions& options) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.take_error();
  if (HasIbnetdiscCacheMagic(*text)) return std::unique_ptr<FabricSource>(new IbnetdiscCacheFabricSource(path));
  return std::unique_ptr<FabricSource>(new IbnetdiscoverDumpFabricSource(path, std::move(text).value(), options));
}

// Several fabric files, one subnet each, as one fabric (fabric_merge.h).
class SeveralFabricFiles : public FabricSource {
 public:
  SeveralFabricFiles(std::vector<std::unique_ptr<FabricSource>> sources, std::vector<std::string> paths)
      : sources_(std::move(sources)), paths_(std::move(paths)) {}
  Result<Fabric> LoadFabric() override {
    std::vector<Fabric> fabrics;
    for (const std::unique_ptr<FabricSource>& source : sources_) {
      Result<Fabric> fabric = source->LoadFabric();
      if (!fabric.ok()) return fabric.take_error();
      fabrics.push_back(std::move(fabric).value());
    }
    return MergeFabrics(std::move(fabrics), paths_);
  }

 private:
  std::vector<std::unique_ptr<FabricSource>> sources_;
  std::vector<std::string> paths_;
};

Result<std::unique_ptr<FabricSource>> OpenFabricFiles(const DiscoverOptions& options) {
  std::vector<std::string> paths = {options.fabric};
  paths.insert(paths.end(), options.more_fabrics.begin(), options.more_fabrics.end());
  for (const std::string& path : paths)
    if (path == "auto" || path == "live" || path == "none")
      return Error(ErrorCode::kBadUsage, "--fabric",
                   fmt::format("\"{}\" with other --fabric values: several fabrics are read from files only "
                               "(one dump or cache per subnet)",
                               path));
  if (paths.size() == 1) return OpenFabricFile(paths.front(), options);
  std::vector<std::unique_ptr<FabricSource>> sources;
  for (const std::string& path : paths) {
    Result<std::unique_ptr<FabricSource>> opened = OpenFabricFile(path, options);
    if (!opened.ok()) return opened.take_error();
    sources.push_back(std::move(opened).value());
  }
  return std::unique_ptr<FabricSource>(new SeveralFabricFiles(std::move(sources), std::move(paths)));
}

struct Layouts {
  std::vector<std::unique_ptr<HostLayoutSource>> sources;
  std::vector<LayoutInput> inputs;
};

Result<Layouts> OpenLayouts(const DiscoverOptions& options) {
  Layouts out;
  auto add = [&](std::unique_ptr<HostLayoutSource> source, std::string host, std::string fallback) {
    out.sources.push_back(std::move(source));
    out.inputs.push_back({std::move(host), std::move(fallback), out.sources.back().get()});
  };
  auto hwloc = [](HwlocLayoutSource source) { return std::make_unique<HwlocLayoutSource>(std::move(source)); };
  if (!options.layout_dir.empty()) {
    std::error_code ec;
    if (!fs::is_directory(options.layout_dir, ec))
      return Error(ErrorCode::kBadInput, options.layout_dir,
                   "not a directory (expected a folder of HOST.xml or HOST.json files)");
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(options.layout_dir, ec))
      if (entry.path().extension() == ".xml" || entry.path().extension() == ".json") files.push_back(entry.path());
    if (files.empty()) return Error(ErrorCode::kBadInput, options.layout_dir, "holds no HOST.xml or HOST.json files");
    std::sort(files.begin(), files.end());
    for (size_t i = 0; i < files.size(); ++i) {
      const fs::path& file = files[i];
      std::string host = file.stem().string();
      if (!IsValidHostName(host))
        return Error(ErrorCode::kBadInput, file.string(),
                     "the file name must be HOST.xml or HOST.json with a valid host name");
      if (i > 0 && files[i - 1].stem() == file.stem())
        return Error(ErrorCode::kBadInput, file.string(),
                     fmt::format("{} has a layout in {} too: keep one", host, files[i - 1].filename().string()));
      if (file.extension() == ".json") add(std::make_unique<JsonLayoutSource>(file.string()), host, host);
      else add(hwloc(HwlocLayoutSource::FromXmlFile(file.string())), host, host);
    }
  }
  if (!options.hwloc_xml.empty())
    add(hwloc(HwlocLayoutSource::FromXmlFile(options.hwloc_xml)), "", fs::path(options.hwloc_xml).stem().string());
  if (out.inputs.empty() && options.local_layout) add(hwloc(HwlocLayoutSource::Live(options.local_layout_timeout)), "", LocalShortHostName());
  return out;
}

}  // namespace

Result<Topology> RunDiscovery(const DiscoverOptions& options) {
  NodeNameMap name_map;
  if (!options.node_name_map_file.empty()) {
    Result<std::string> text = ReadTextFile(options.node_name_map_file);
    if (!text.ok()) return text.take_error();
    Result<NodeNameMap> parsed = ParseNodeNameMap(*text, options.node_name_map_file);
    if (!parsed.ok()) return parsed.take_error();
    name_map = std::move(parsed).value();
  }
  Result<Layouts> layouts = OpenLayouts(options);
  if (!layouts.ok()) return layouts.take_error();

  IbnetdiscFabricSource live(options.live);
  NoteMissingFabric optional_live(live, options);
  std::unique_ptr<FabricSource> file_source;
  FabricSource* fabric = nullptr;
  if (options.fabric == "auto" && options.more_fabrics.empty()) {
    fabric = &optional_live;
  } else if (options.fabric == "live" && options.more_fabrics.empty()) {
    fabric = &live;
  } else if (options.fabric != "none" || !options.more_fabrics.empty()) {
    Result<std::unique_ptr<FabricSource>> opened = OpenFabricFiles(options);
    if (!opened.ok()) return opened.take_error();
    file_source = std::move(opened).value();
    fabric = file_source.get();
  }
  return AssembleTopology(fabric, name_map, layouts->inputs, options.generated);
}

}  // namespace topolaunch
