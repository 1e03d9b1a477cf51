// NCCL's topology XML (what NCCL_TOPO_FILE points at), written from a host's
// hwloc layout for VMs and containers whose PCI tree NCCL cannot see.
#pragma once

#include <string>
#include <vector>

#include "env/env_facts.h"
#include "topolaunch/layout.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// The XML NCCL's src/graph/xml.cc reads: <system version="1"> holding one
/// <cpu> per NUMA node, under it the PCIe switches as NCCL itself would make
/// them from sysfs (one <pci> per switch, named after its upstream port,
/// nested as the switches are, with its PCI ids when known; from
/// HostLayout::pci_bridges), and in them
/// the GPUs and the NICs of `ports`. A layout without bridges gets a virtual
/// switch (busid "ffff:ff:NN.0") for each group of devices its GPU x NIC
/// relations put behind one switch. Written in the narrow syntax of NCCL's
/// own dumps (no XML declaration, double quotes, one space between
/// attributes, "/>" right after the last one).
///
/// Only attributes topolaunch knows are written: a value in the file wins
/// over NCCL's own detection, so guessing would be worse than leaving it to
/// NCCL. Left out on purpose: gpu dev (the NVML index, which a container
/// renumbers), sm/rank/gdr (NCCL asks the driver), net maxconn/gdr, cpu
/// vendor/familyid/modelid (NCCL reads cpuid), and a PCI link when hwloc did
/// not report one (NCCL then reads sysfs).
///
/// Errors: kBadInput when a device name holds a character NCCL's parser
/// cannot read ('"', '<', '>', '&') or is longer than its 253-character limit.
Result<std::string> FormatNcclTopoXml(const HostLayout& layout, const std::vector<ComputePort>& ports, FabricKind fabric);

/// Linux cpumap form of a CPU set: 32-bit hex groups, most significant first
/// ("00000000,0000ffff"); "00000000" for none.
std::string FormatCpuMask(const std::vector<int>& cpus);

/// The PCIe generation and width NCCL's table understands closest to a link
/// of `gbytes_per_s` in total: {"16.0 GT/s PCIe", 16}. NCCL only uses their
/// product, so ties (Gen3 x16 = Gen4 x8) do not matter.
std::pair<std::string, int> PcieLinkAttributes(double gbytes_per_s);

}  // namespace topolaunch
