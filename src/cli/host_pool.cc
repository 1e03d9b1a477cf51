#include "cli/host_pool.h"

#include <cstdlib>

#include "core/hostfile.h"
#include "core/hostlist.h"
#include "core/text_io.h"

namespace topolaunch::cli {

Result<HostPool> ReadHostPool(const std::string& hostfile, const std::string& hosts_expression) {
  HostPool pool;
  if (!hostfile.empty()) {
    Result<std::string> text = ReadTextFile(hostfile);
    if (!text.ok()) return text.take_error();
    Result<std::vector<HostfileEntry>> entries = ParseHostfile(*text, hostfile);
    if (!entries.ok()) return entries.take_error();
    bool agree = true;
    for (const HostfileEntry& e : *entries) {
      pool.hosts.push_back(e.host);
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
  if (const char* nodelist = std::getenv("SLURM_JOB_NODELIST"); nodelist && *nodelist) {
    Result<std::vector<std::string>> hosts = ExpandHostList(nodelist);
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

}  // namespace topolaunch::cli
