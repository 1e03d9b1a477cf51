// The order-quality part of plan_bench: SimGrid/SMPI ring all-reduce.
#pragma once

/// Simulates MPI_Allreduce (SMPI's logical-ring algorithm "lr") on a
/// 256-host two-level fat tree (16 leaves x 16 hosts, 4 spines: 4:1
/// oversubscribed) for three rank orders -- topolaunch's plan, natural
/// hostname order, a random order (seed 42) -- with host names that do not
/// follow the cabling, and prints times and ratios. Returns 0, also when
/// SimGrid is missing (it says so).
int RunSimgridBench();
