#include "run/host_pool.h"

#include <cstdlib>

#include <fmt/format.h>

#include "core/hostfile.h"
#include "core/hostlist.h"
#include "core/text_io.h"

namespace topolaunch::run {

namespace {

std::string Environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

Result<HostPool> ReadHostPool(const std::string& hostfile, const std::string& hosts_expression) {
  HostPool pool;
  pool.slurm_job_id = Environment("SLURM_JOB_ID");
  pool.allocation_list = Environment("SLURM_JOB_NODELIST");
  if (!pool.allocation_list.empty())
    if (Result<std::vector<std::string>> hosts = ExpandHostList(pool.allocation_list); hosts.ok()) pool.allocation = std::move(hosts).value();
  if (!hostfile.empty()) {
    Result<std::string> text = ReadTextFile(hostfile);
    if (!text.ok()) return text.take_error();
    Result<std::vector<HostfileEntry>> entries = ParseHostfile(*text, hostfile);
    if (!entries.ok()) return entries.take_error();
    bool agree = true;
    auto slots_of = [](const HostfileEntry& e) { return e.slots ? fmt::format("{} slots={}", e.host, *e.slots) : e.host + " (no slots)"; };
    for (const HostfileEntry& e : *entries) {
      pool.hosts.push_back(e.host);
      if (agree && e.slots != entries->front().slots)
        pool.slots_disagree = fmt::format("{}, {}", slots_of(entries->front()), slots_of(e));
      agree = agree && e.slots && e.slots == entries->front().slots;
    }
    if (agree && !entries->empty()) pool.slots = entries->front().slots;
    if (pool.hosts.empty()) return Error(ErrorCode::kBadInput, hostfile, "no hosts in the file");
    pool.source = "--hostfile";
    return pool;
  }
  if (!hosts_expression.empty()) {
    Result<std::vector<std::string>> hosts = ExpandHostList(hosts_expression);
    if (!hosts.ok()) return hosts.take_error();
    pool.hosts = std::move(hosts).value();
    pool.source = "--hosts";
    return pool;
  }
  if (!pool.allocation_list.empty()) {
    Result<std::vector<std::string>> hosts = ExpandHostList(pool.allocation_list);
    if (!hosts.ok()) {
      Error e = hosts.take_error();
      for (Problem& p : e.problems) p.where = "SLURM_JOB_NODELIST: " + p.where;
      return e;
    }
    pool.hosts = std::move(hosts).value();
    pool.source = "SLURM_JOB_NODELIST";
  }
  return pool;
}

Status CheckSlotsAgree(const HostPool& pool, const std::string& hostfile) {
  if (pool.slots_disagree.empty()) return Ok{};
  return Error(ErrorCode::kBadInput, hostfile,
               fmt::format("slots differ ({}): every node runs the same number of ranks (torchrun's --nproc_per_node), "
                           "so give every host the same slots, or pass --nproc-per-node N",
                           pool.slots_disagree));
}

}  // namespace topolaunch::run
