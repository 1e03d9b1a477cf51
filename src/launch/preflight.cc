// Preflight messages as JSON lines, and the judgement of a node's reply.
//
// The reply carries what only the node can see, in the same shapes the rest
// of topolaunch uses (the layout as in topology.json, RDMA ports as in
// env_facts.h), so `run` can hand them to plan and env unchanged. Optional
// facts are JSON null when the node could not gather them.
#include "launch/preflight.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/hostlist.h"
#include "core/json_checker.h"
#include "core/json_text.h"
#include "core/layout_json.h"
#include "env/socket_stripes.h"

namespace topolaunch {

namespace {

using nlohmann::json;

constexpr const char* kRequestName = "preflight request";
constexpr const char* kReplyName = "preflight reply";

// The reply's host names, paths and errno texts are for people: bytes that
// are not UTF-8 become U+FFFD rather than failing the whole line.
std::string DumpLine(const json& j) { return DumpJsonText(j, -1); }

// The request's folder, files and programs are looked up on the node, so
// they travel byte for byte (core/json_text.h).
json BytesArrayToJson(const std::vector<std::string>& items) {
  json out = json::array();
  for (const std::string& item : items) out.push_back(BytesToJson(item));
  return out;
}

constexpr const char* kBytesExpected = "expected a string or {\"hex\": \"...\"}";

std::vector<std::string> BytesArrayFromJson(JsonChecker& c, const json& object, const std::string& path,
                                            std::string_view key) {
  std::vector<std::string> out;
  const json* items = c.Array(object, path, key, false);
  if (!items) return out;
  for (size_t i = 0; i < items->size(); ++i) {
    if (std::optional<std::string> bytes = BytesFromJson((*items)[i])) out.push_back(std::move(*bytes));
    else c.Report(JsonIndex(JsonPath(path, key), i), kBytesExpected);
  }
  return out;
}

bool IsNull(const json& object, std::string_view key) {
  auto it = object.find(key);
  return it != object.end() && it->is_null();
}

json RdmaPortsToJson(const std::vector<RdmaPort>& ports) {
  json out = json::array();
  for (const RdmaPort& p : ports) {
    json gids = json::array();
    for (const GidEntry& g : p.gids) gids.push_back({{"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"ndev", g.ndev}});
    out.push_back({{"device", p.device}, {"port", p.port}, {"link_layer", p.link_layer}, {"state", p.state}, {"gids", gids}});
  }
  return out;
}

std::vector<RdmaPort> RdmaPortsFromJson(JsonChecker& c, const json& array, const std::string& path) {
  std::vector<RdmaPort> ports;
  for (size_t i = 0; i < array.size(); ++i) {
    std::string p = JsonIndex(path, i);
    const json& j = array[i];
    if (!j.is_object()) {
      c.Report(p, "expected an object");
      continue;
    }
    RdmaPort port;
    port.device = c.String(j, p, "device").value_or("");
    port.port = static_cast<int>(c.Integer(j, p, "port", 0, 255).value_or(0));
    port.link_layer = c.String(j, p, "link_layer").value_or("");
    port.state = c.String(j, p, "state").value_or("");
    if (const json* gids = c.Array(j, p, "gids")) {
      for (size_t k = 0; k < gids->size(); ++k) {
        std::string gp = JsonIndex(JsonPath(p, "gids"), k);
        const json& g = (*gids)[k];
        if (!g.is_object()) {
          c.Report(gp, "expected an object");
          continue;
        }
        GidEntry entry;
        entry.index = static_cast<int>(c.Integer(g, gp, "index", 0, 1 << 20).value_or(0));
        entry.gid = c.String(g, gp, "gid").value_or("");
        entry.type = c.String(g, gp, "type").value_or("");
        entry.ndev = c.String(g, gp, "ndev").value_or("");
        port.gids.push_back(std::move(entry));
      }
    }
    ports.push_back(std::move(port));
  }
  return ports;
}

// A node reports a handful of interfaces; more than this is not a node's answer.
constexpr size_t kMaxSocketInterfaces = 256;

std::vector<SocketInterface> SocketInterfacesFromJson(JsonChecker& c, const json& list) {
  std::vector<SocketInterface> interfaces;
  if (list.size() > kMaxSocketInterfaces) {
    c.Report("$.socket_interfaces", fmt::format("{} interfaces, more than {}", list.size(), kMaxSocketInterfaces));
    return interfaces;
  }
  for (size_t k = 0; k < list.size(); ++k) {
    std::string path = JsonIndex("$.socket_interfaces", k);
    if (!list[k].is_object()) {
      c.Report(path, "expected an object");
      continue;
    }
    SocketInterface i;
    i.name = c.String(list[k], path, "name").value_or("");
    i.address = c.String(list[k], path, "address").value_or("");
    if (!IsNull(list[k], "speed_mbps")) i.speed_mbps = c.Integer(list[k], path, "speed_mbps", 1, 100'000'000, false);
    // The name goes into NCCL_SOCKET_IFNAME: a Linux interface name (IFNAMSIZ), no list separator.
    if (i.name.empty() || i.name.size() > 15 || i.name.find_first_of(",=/ \t\n") != std::string::npos)
      c.Report(JsonPath(path, "name"), "not an interface name");
    if (!SubnetOf(i.address)) c.Report(JsonPath(path, "address"), "expected an IPv4 address with its prefix (\"10.1.0.5/16\")");
    interfaces.push_back(std::move(i));
  }
  return interfaces;
}

json ReplyToJson(const PreflightReply& r) {
  json programs = json::array();
  for (const ProgramFound& p : r.programs) programs.push_back({{"name", p.name}, {"path", p.path}});
  json j;
  j["hostname"] = r.hostname;
  j["boot_id"] = r.boot_id;
  j["unix_time_ms"] = r.unix_time_ms;
  j["programs"] = programs;
  j["port_free"] = r.port_free ? json(*r.port_free) : json(nullptr);
  j["port_problem"] = r.port_problem;
  j["gpus"] = r.gpus;
  j["layout"] = r.layout ? LayoutToJson(*r.layout) : json(nullptr);
  j["layout_problem"] = r.layout_problem;
  j["rdma_ports"] = r.rdma_ports ? RdmaPortsToJson(*r.rdma_ports) : json(nullptr);
  j["socket_route"] = r.socket_route ? json{{"interface", r.socket_route->interface}, {"detail", r.socket_route->detail}}
                                     : json(nullptr);
  j["socket_route_problem"] = r.socket_route_problem;
  json interfaces = json::array();
  for (const SocketInterface& i : r.socket_interfaces)
    interfaces.push_back({{"name", i.name}, {"address", i.address}, {"speed_mbps", i.speed_mbps ? json(*i.speed_mbps) : json(nullptr)}});
  j["socket_interfaces"] = interfaces;
  j["cwd_problem"] = r.cwd_problem;
  j["file_problems"] = r.file_problems;
  j["interpreter"] = r.interpreter;
  j["interpreter_problem"] = r.interpreter_problem;
  if (r.audit_errors) j["audit_errors"] = *r.audit_errors;
  return j;
}

void ReadReplyFacts(JsonChecker& c, const json& j, PreflightReply& r) {
  r.boot_id = c.String(j, "$", "boot_id", false).value_or("");
  if (!IsNull(j, "port_free")) r.port_free = c.Boolean(j, "$", "port_free", false);
  r.port_problem = c.String(j, "$", "port_problem", false).value_or("");
  if (!IsNull(j, "layout")) {
    if (const json* layout = c.Object(j, "$", "layout", false)) {
      Result<HostLayout> l = LayoutFromJson(*layout, "$.layout");
      if (l.ok()) r.layout = std::move(l).value();
      else
        for (const Problem& problem : l.error().problems) c.Report(problem.where, problem.what);
    }
  }
  r.layout_problem = c.String(j, "$", "layout_problem", false).value_or("");
  if (!IsNull(j, "rdma_ports"))
    if (const json* ports = c.Array(j, "$", "rdma_ports", false)) r.rdma_ports = RdmaPortsFromJson(c, *ports, "$.rdma_ports");
  if (!IsNull(j, "socket_route")) {
    if (const json* route = c.Object(j, "$", "socket_route", false)) {
      SocketRoute s;
      s.interface = c.String(*route, "$.socket_route", "interface").value_or("");
      s.detail = c.String(*route, "$.socket_route", "detail").value_or("");
      r.socket_route = std::move(s);
    }
  }
  r.socket_route_problem = c.String(j, "$", "socket_route_problem", false).value_or("");
  if (const json* interfaces = c.Array(j, "$", "socket_interfaces", false)) r.socket_interfaces = SocketInterfacesFromJson(c, *interfaces);
  r.cwd_problem = c.String(j, "$", "cwd_problem", false).value_or("");
  r.file_problems = c.StringArray(j, "$", "file_problems", false);
  if (c.Member(j, "$", "audit_errors", false)) {
    r.audit_errors = c.StringArray(j, "$", "audit_errors", false);
    if (r.audit_errors->size() > kMaxAuditErrors) r.audit_errors->resize(kMaxAuditErrors);
  }
  r.interpreter = c.String(j, "$", "interpreter", false).value_or("");
  r.interpreter_problem = c.String(j, "$", "interpreter_problem", false).value_or("");
}

std::string Plural(int n, std::string_view word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

}  // namespace

std::string FormatPreflightRequest(const PreflightRequest& request) {
  json body;
  body["programs"] = BytesArrayToJson(request.programs);
  body["master_port"] = request.master_port;
  body["master_addr"] = request.master_addr;
  body["want_layout"] = request.want_layout;
  body["cwd"] = BytesToJson(request.cwd);
  body["files"] = BytesArrayToJson(request.files);
  body["interpreter_of"] = BytesToJson(request.interpreter_of);
  if (request.audit) body["audit"] = true;
  if (!request.sysfs_root.empty()) body["sysfs_root"] = BytesToJson(request.sysfs_root);
  return DumpLine(json{{"preflight", body}}) + "\n";
}

bool IsPreflightRequest(std::string_view line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("preflight");
}

Result<PreflightRequest> ParsePreflightRequest(std::string_view line) {
  Result<json> parsed = ParseJsonText(line, kRequestName);
  if (!parsed.ok()) return parsed.take_error();
  JsonChecker c(kRequestName);
  PreflightRequest request;
  if (!parsed->is_object()) {
    c.Report("$", "expected an object");
    return c.TakeError();
  }
  const json* body = c.Object(*parsed, "$", "preflight");
  if (!body) return c.TakeError();
  const std::string p = "$.preflight";
  request.programs = BytesArrayFromJson(c, *body, p, "programs");
  request.master_port = static_cast<int>(c.Integer(*body, p, "master_port", 0, 65535, false).value_or(0));
  request.master_addr = c.String(*body, p, "master_addr", false).value_or("");
  request.want_layout = c.Boolean(*body, p, "want_layout", false).value_or(true);
  if (const json* cwd = c.Member(*body, p, "cwd", false)) {
    if (std::optional<std::string> bytes = BytesFromJson(*cwd)) request.cwd = std::move(*bytes);
    else c.Report(p + ".cwd", kBytesExpected);
  }
  request.files = BytesArrayFromJson(c, *body, p, "files");
  if (const json* of = c.Member(*body, p, "interpreter_of", false)) {
    if (std::optional<std::string> bytes = BytesFromJson(*of)) request.interpreter_of = std::move(*bytes);
    else c.Report(p + ".interpreter_of", kBytesExpected);
  }
  request.audit = c.Boolean(*body, p, "audit", false).value_or(false);
  if (const json* root = c.Member(*body, p, "sysfs_root", false)) {
    if (std::optional<std::string> bytes = BytesFromJson(*root)) request.sysfs_root = std::move(*bytes);
    else c.Report(p + ".sysfs_root", kBytesExpected);
  }
  if (!c.ok()) return c.TakeError();
  return request;
}

std::string FormatPreflightReply(const PreflightReply& reply) {
  return std::string(kPreflightReplyPrefix) + DumpLine(ReplyToJson(reply)) + "\n";
}

bool IsPreflightReply(std::string_view line) { return line.starts_with(kPreflightReplyPrefix); }

Result<PreflightReply> ParsePreflightReply(std::string_view line) {
  if (!IsPreflightReply(line))
    return Error(ErrorCode::kBadInput, kReplyName, fmt::format("expected a line starting with \"{}\"", kPreflightReplyPrefix));
  line.remove_prefix(kPreflightReplyPrefix.size());
  Result<json> parsed = ParseJsonText(line, kReplyName);
  if (!parsed.ok()) return parsed.take_error();
  JsonChecker c(kReplyName);
  PreflightReply reply;
  const json& j = *parsed;
  if (!j.is_object()) {
    c.Report("$", "expected an object");
    return c.TakeError();
  }
  reply.hostname = c.String(j, "$", "hostname").value_or("");
  reply.unix_time_ms = c.Integer(j, "$", "unix_time_ms", 0, INT64_MAX).value_or(0);
  if (const json* programs = c.Array(j, "$", "programs")) {
    for (size_t i = 0; i < programs->size(); ++i) {
      std::string p = JsonIndex("$.programs", i);
      if (!(*programs)[i].is_object()) {
        c.Report(p, "expected an object");
        continue;
      }
      reply.programs.push_back({c.String((*programs)[i], p, "name").value_or(""),
                                c.String((*programs)[i], p, "path").value_or("")});
    }
  }
  reply.gpus = static_cast<int>(c.Integer(j, "$", "gpus", 0, 65535).value_or(0));
  ReadReplyFacts(c, j, reply);
  if (!c.ok()) return c.TakeError();
  return reply;
}

std::vector<std::string> JudgePreflight(std::string_view host, const PreflightReply& reply, ReplyWindow window,
                                        const PreflightExpectations& expect) {
  std::vector<std::string> problems;
  for (const ProgramFound& program : reply.programs) {
    if (!program.path.empty()) continue;
    if (program.name.find('/') == std::string::npos)
      problems.push_back(fmt::format("{} not found in PATH of {}", program.name, host));
    else
      problems.push_back(fmt::format("{} not found or not executable on {}", program.name, host));
  }
  if (host == expect.master_host && reply.port_free == false) {
    std::string port = expect.master_port > 0 ? fmt::format("port {}", expect.master_port) : "master port";
    if (reply.port_problem == "in use") problems.push_back(port + " in use");
    else if (reply.port_problem.empty()) problems.push_back(port + " not free");
    else problems.push_back(fmt::format("{} not free: {}", port, reply.port_problem));
  }
  if (!expect.master_addr.empty() && reply.socket_route_problem.find("cannot resolve") != std::string::npos)
    problems.push_back(fmt::format("cannot resolve the master address {} ({}): rank 0 would be unreachable; pass "
                                   "--master-addr with a name or address every node resolves",
                                   expect.master_addr, reply.socket_route_problem));
  if (!reply.cwd_problem.empty())
    problems.push_back(fmt::format("working folder {} (not on a shared file system? pass --cwd)", reply.cwd_problem));
  for (const std::string& file : reply.file_problems) problems.push_back(file);
  bool programs_found = std::all_of(reply.programs.begin(), reply.programs.end(),
                                    [](const ProgramFound& p) { return !p.path.empty(); });
  if (expect.want_interpreter && reply.interpreter.empty() && programs_found)
    problems.push_back((reply.interpreter_problem.empty() ? std::string("torchrun's Python not reported (an older agent?)")
                                                          : reply.interpreter_problem) +
                       "; pass --python");
  if (expect.require_gpus) {
    if (reply.gpus == 0)
      problems.push_back("no GPU found (for a CPU-only job pass --no-gpus)");
    else if (reply.gpus < expect.nproc_per_node)
      problems.push_back(fmt::format("{}, but --nproc-per-node {}", Plural(reply.gpus, "GPU"), expect.nproc_per_node));
  }
  if (expect.audit) {
    if (!reply.audit_errors) problems.push_back("did not run the node checks (an older topolaunch agent?)");
    else
      for (const std::string& finding : *reply.audit_errors) problems.push_back("audit: " + finding);
  }
  // The reply was written after the request left and before it arrived:
  // only a time outside that window is skew. (Measured against the arrival
  // alone, a slow way back read as a clock behind: at 256 nodes on a busy
  // login node, replies that took over a second refused the run.)
  int64_t skew = reply.unix_time_ms > window.received_ms ? reply.unix_time_ms - window.received_ms
                 : reply.unix_time_ms < window.sent_ms   ? reply.unix_time_ms - window.sent_ms
                                                         : 0;
  if (std::llabs(skew) > expect.max_clock_skew_ms)
    problems.push_back(fmt::format("clock {:.1f} s {} this machine", static_cast<double>(std::llabs(skew)) / 1000.0,
                                   skew > 0 ? "ahead of" : "behind"));
  return problems;
}

Result<int> RanksPerNodeFromGpus(const std::vector<std::string>& hosts, const std::vector<int>& gpus) {
  std::map<int, std::vector<std::string>> by_count;  // GPUs -> the nodes with that many
  for (size_t i = 0; i < hosts.size() && i < gpus.size(); ++i) by_count[gpus[i]].push_back(hosts[i]);
  auto name = [](std::vector<std::string> nodes) { return HostListForMessages(std::move(nodes)); };
  if (by_count.empty()) return Error(ErrorCode::kBadUsage, "--nproc-per-node", "no node to count the GPUs of");
  if (by_count.size() == 1) {
    auto [count, nodes] = *by_count.begin();
    if (count > 0) return count;
    return Error(ErrorCode::kUnavailable, "preflight",
                 fmt::format("no GPU found on {}: --nproc-per-node is one rank per GPU by default; for a CPU-only job "
                             "pass --no-gpus (one rank per node) or --nproc-per-node N",
                             name(nodes)));
  }
  // The count most nodes have (the larger on a tie) is the norm; the others are named.
  auto norm = by_count.begin();
  for (auto it = by_count.begin(); it != by_count.end(); ++it)
    if (it->second.size() >= norm->second.size()) norm = it;
  std::vector<std::string> odd;
  for (const auto& [count, nodes] : by_count)
    if (count != norm->first) odd.push_back(fmt::format("{} on {}", Plural(count, "GPU"), name(nodes)));
  return Error(ErrorCode::kUnavailable, "preflight",
               fmt::format("the nodes do not agree on their GPU count, so there is no default --nproc-per-node: "
                           "{} on {}, but {}; pass --nproc-per-node N (at most the fewest) or leave the odd nodes out",
                           Plural(norm->first, "GPU"), name(norm->second), fmt::join(odd, ", ")));
}

std::vector<std::string> SameMachineProblems(const std::vector<std::string>& hosts,
                                             const std::vector<const PreflightReply*>& replies) {
  std::vector<std::string> problems(hosts.size());
  std::map<std::pair<std::string, std::string>, size_t> first;  // (boot id, host name) -> node
  for (size_t i = 0; i < hosts.size() && i < replies.size(); ++i) {
    if (!replies[i] || replies[i]->boot_id.empty()) continue;
    auto [it, inserted] = first.try_emplace({replies[i]->boot_id, replies[i]->hostname}, i);
    if (inserted) continue;
    problems[i] = fmt::format("the same machine as {} (host name {}, boot id {}): two names for one machine would start "
                              "two torchruns on the same GPUs and CPUs; list each machine once",
                              hosts[it->second], replies[i]->hostname, replies[i]->boot_id);
  }
  return problems;
}

}  // namespace topolaunch
