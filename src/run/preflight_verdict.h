// What `run` concludes from every node's preflight reply, as pure
// functions: the problems that make a node not ready (each node judged
// alone by launch/preflight.h, then the nodes against each other), the GPU
// counts the ranks per node come from, and which Python will run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launch/preflight.h"
#include "launch/run_session.h"
#include "topolaunch/result.h"
#include "topolaunch/topology.h"

namespace topolaunch::run {

/// Every node's problems, in node order: its start failure, else what
/// JudgePreflight finds in its reply; then a node that is the same machine
/// as one before it. A node with none is ready.
std::vector<std::vector<std::string>> JudgeNodes(const PreflightExpectations& expect, const std::vector<SessionNode>& nodes,
                                                 const std::vector<NodePreflight>& preflight);

/// How many nodes have a problem.
size_t CountNotReady(const std::vector<std::vector<std::string>>& problems);

/// A node that was not asked for its layout (the topology has it) counts
/// the GPUs of the topology's layout.
void FillKnownGpuCounts(const Topology& topology, const std::vector<SessionNode>& nodes,
                        std::vector<NodePreflight>& preflight);

/// One rank per GPU when every node answered (RanksPerNodeFromGpus); else
/// nullopt (the nodes that did not are named by JudgeNodes).
std::optional<Result<int>> RanksPerNodeFromReplies(const std::vector<SessionNode>& nodes,
                                                   const std::vector<NodePreflight>& preflight);

/// "python: the one torchrun runs under (its #! line): /usr/bin/python3
/// (node[1-4]); ...", one part per interpreter when the nodes differ. Every
/// node has a reply.
std::string InterpreterNote(const std::vector<SessionNode>& nodes, const std::vector<NodePreflight>& preflight);

}  // namespace topolaunch::run
