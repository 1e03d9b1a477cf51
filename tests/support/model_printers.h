// Readable gtest failure messages for the model: values print as their
// topology.json form instead of raw bytes.
#pragma once

#include <ostream>

#include "topolaunch/topology.h"

namespace topolaunch {

void PrintTo(const Topology& value, std::ostream* os);
void PrintTo(const TopologySwitch& value, std::ostream* os);
void PrintTo(const TopologyHost& value, std::ostream* os);
void PrintTo(const TopologyLink& value, std::ostream* os);
void PrintTo(const UnmappedCa& value, std::ostream* os);
void PrintTo(const HcaAttachment& value, std::ostream* os);

}  // namespace topolaunch
