// Preflight: what `run` asks every node before anything starts, and the
// node's answer, as lines on the agent's SSH channel. Pure: the message
// formats and the judgement; preflight_probe.h gathers the facts on the node.
//
// The conversation with `topolaunch agent` (one SSH session per node):
//   run  -> agent  {"preflight":{"programs":[...],"master_port":29500,...}}\n
//   agent -> run   @topolaunch-preflight {"hostname":"node1",...}\n   (stdout)
//   run  -> agent  the launch message (launch_message.h), or EOF: start nothing
// Lines the login shell prints before the reply (.bashrc noise) are passed
// through as ordinary output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "env/env_facts.h"
#include "topolaunch/layout.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// What the node is asked to check and report.
struct PreflightRequest {
  std::vector<std::string> programs;  ///< looked up in the agent's PATH (or checked when they hold a '/')
  int master_port = 0;                ///< TCP port that must be free to bind; 0: not checked
  std::string master_addr;            ///< rank 0's host, for the socket route; "" = none
  bool want_layout = true;            ///< gather the hwloc layout (NUMA, GPUs, NICs)
  std::string cwd;                    ///< folder the job runs in; "" = not checked
  std::vector<std::string> files;     ///< must be readable there (the script)
  std::string interpreter_of;         ///< a program whose Python to report (torchrun); "" = not asked
  bool audit = false;                 ///< run the node checks of `audit --local`
  std::string sysfs_root;             ///< where those read sysfs; "" = "/" (tests point it at a fake tree)
  bool operator==(const PreflightRequest&) const = default;
};

struct ProgramFound {
  std::string name;  ///< as requested
  std::string path;  ///< absolute path found; "" = not found / not executable
  bool operator==(const ProgramFound&) const = default;
};

/// The node's answer.
struct PreflightReply {
  std::string hostname;               ///< gethostname(), short
  std::string boot_id;                ///< /proc/sys/kernel/random/boot_id: one machine's since its boot; "" = unknown
  int64_t unix_time_ms = 0;           ///< its clock when the reply was written
  std::vector<ProgramFound> programs; ///< one per requested program, same order
  std::optional<bool> port_free;      ///< nullopt: not checked
  std::string port_problem;           ///< why not free ("in use", errno text)
  int gpus = 0;                       ///< GPUs the node has (layout, else NVML)
  std::optional<HostLayout> layout;   ///< when asked and hwloc could load it
  std::string layout_problem;         ///< why not
  std::optional<std::vector<RdmaPort>> rdma_ports;  ///< nullopt: unreadable
  std::optional<SocketRoute> socket_route;
  std::string socket_route_problem;
  std::vector<SocketInterface> socket_interfaces;  ///< its IPv4 interfaces that are up (with master_addr asked)
  std::string cwd_problem;                 ///< why the folder cannot be used; "" = fine or not checked
  std::vector<std::string> file_problems;  ///< "train.py: No such file or directory"
  std::string interpreter;                 ///< the Python `interpreter_of` runs under; "" = not asked or not known
  std::string interpreter_problem;         ///< why not known
  /// With `audit` asked: its findings at error or worse, "check: message"
  /// each (at most kMaxAuditErrors); nullopt when not asked.
  std::optional<std::vector<std::string>> audit_errors;
  bool operator==(const PreflightReply&) const = default;
};

/// The most audit findings one reply carries (a broken node can have hundreds).
inline constexpr size_t kMaxAuditErrors = 16;

/// The prefix that marks the reply line on the agent's stdout.
inline constexpr std::string_view kPreflightReplyPrefix = "@topolaunch-preflight ";

/// {"preflight":{...}} and '\n'.
std::string FormatPreflightRequest(const PreflightRequest& request);
/// True when a first line from `run` is a preflight request (an object with
/// a "preflight" key) rather than a launch message.
bool IsPreflightRequest(std::string_view line);
/// Errors: kBadInput by JSON path.
Result<PreflightRequest> ParsePreflightRequest(std::string_view line);

/// kPreflightReplyPrefix + one line of JSON + '\n'.
std::string FormatPreflightReply(const PreflightReply& reply);
/// True when an output line is the reply (starts with the prefix).
bool IsPreflightReply(std::string_view line);
/// Parses a reply line (with its prefix). Errors: kBadInput by JSON path.
Result<PreflightReply> ParsePreflightReply(std::string_view line);

/// What the run needs of every node.
struct PreflightExpectations {
  int nproc_per_node = 1;
  bool require_gpus = true;           ///< false: CPU-only job (--no-gpus)
  std::string master_host;            ///< the node-rank-0 host: its port must be free
  std::string master_addr;            ///< the address the nodes were asked to resolve; "" = not asked
  bool want_interpreter = false;      ///< the node must have told torchrun's Python (no --python given)
  int64_t max_clock_skew_ms = 1000;
  int master_port = 0;                ///< named in the port sentence; 0: "master port"
  bool audit = false;                 ///< the node checks were asked for: each error finding is a problem
};

/// When the login node sent the request and when the reply arrived (its
/// clock, Unix ms). A node whose clock agrees wrote its reply in between,
/// however long the way there and back took.
struct ReplyWindow {
  int64_t sent_ms = 0;
  int64_t received_ms = 0;
};

/// Every problem of one node, one sentence each ("torchrun not found in
/// PATH", "2 GPUs, but --nproc-per-node 4", "port 29500 in use",
/// "clock 3.2 s ahead of this machine": by how far its time lies outside
/// `window`). Empty when the node is fit.
std::vector<std::string> JudgePreflight(std::string_view host, const PreflightReply& reply, ReplyWindow window,
                                        const PreflightExpectations& expect);

/// The ranks per node when --nproc-per-node is not given: one per GPU, the
/// count every node reports (`gpus[i]` for `hosts[i]`). An error (exit 3)
/// when no node has a GPU ("pass --no-gpus"), or when the nodes disagree:
/// it names the odd ones out against the count most nodes have.
Result<int> RanksPerNodeFromGpus(const std::vector<std::string>& hosts, const std::vector<int>& gpus);

/// One problem per node that is a machine listed before under another name
/// (the same boot id and host name: `node1` and its address), "" for the
/// others. Containers on one machine have host names of their own and pass.
std::vector<std::string> SameMachineProblems(const std::vector<std::string>& hosts,
                                             const std::vector<const PreflightReply*>& replies);

}  // namespace topolaunch
