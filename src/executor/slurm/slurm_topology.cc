// Replica placement from a Slurm task's environment; see slurm_topology.h.
#include "executor/slurm/slurm_topology.h"

#include <charconv>

namespace ty::executor {
namespace {

Result<int64_t> Number(std::string_view text, std::string_view what) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || value < 0) {
    return InvalidArgument(std::string(what) + ": \"" + std::string(text) + "\" is not a number");
  }
  return value;
}

// Splits at commas outside brackets.
std::vector<std::string_view> TopLevelItems(std::string_view list) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      if (i > start) out.push_back(list.substr(start, i - start));
      start = i + 1;
    } else if (list[i] == '[') {
      ++depth;
    } else if (list[i] == ']') {
      --depth;
    }
  }
  return out;
}

// "08-10" -> 08 09 10 (the first bound's width kept); "5" -> 5.
Status AppendRange(std::string_view prefix, std::string_view range, std::string_view suffix,
                   size_t limit, std::vector<std::string>* out) {
  const size_t dash = range.find('-');
  std::string_view first = range.substr(0, dash);
  std::string_view last = dash == std::string_view::npos ? first : range.substr(dash + 1);
  ASSIGN_OR_RETURN(int64_t from, Number(first, "host list range"));
  ASSIGN_OR_RETURN(int64_t to, Number(last, "host list range"));
  if (to < from)
    return InvalidArgument("host list range " + std::string(range) + " runs backwards");
  if (static_cast<size_t>(to - from) + out->size() >= limit) {
    return InvalidArgument("host list names more than " + std::to_string(limit) + " hosts");
  }
  for (int64_t n = from; n <= to; ++n) {
    std::string digits = std::to_string(n);
    if (digits.size() < first.size()) digits.insert(0, first.size() - digits.size(), '0');
    out->push_back(std::string(prefix) + digits + std::string(suffix));
  }
  return Status::Ok();
}

std::string Var(const EnvLookup& env, const std::string& name) { return env(name).value_or(""); }

Result<std::string> Required(const EnvLookup& env, const std::string& name) {
  std::optional<std::string> value = env(name);
  if (!value || value->empty()) return InvalidArgument(name + " is not set");
  return *value;
}

struct PoolRun {
  int pool = 0;
  int64_t count = 0;
};

// TY_SLURM_POOLS: "0:1,1:2,2:1".
Result<std::vector<PoolRun>> PoolRuns(std::string_view text) {
  std::vector<PoolRun> out;
  for (std::string_view item : TopLevelItems(text)) {
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      return InvalidArgument("TY_SLURM_POOLS: \"" + std::string(item) + "\" is not POOL:COUNT");
    }
    ASSIGN_OR_RETURN(int64_t pool, Number(item.substr(0, colon), "TY_SLURM_POOLS pool"));
    ASSIGN_OR_RETURN(int64_t count, Number(item.substr(colon + 1), "TY_SLURM_POOLS count"));
    if (pool > 64 || count == 0) {
      return InvalidArgument("TY_SLURM_POOLS: \"" + std::string(item) + "\" is out of range");
    }
    out.push_back({static_cast<int>(pool), count});
  }
  if (out.empty()) return InvalidArgument("TY_SLURM_POOLS is empty");
  for (size_t i = 0; i < out.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (out[i].pool == out[j].pool) {
        return InvalidArgument("TY_SLURM_POOLS names pool " + std::to_string(out[i].pool) +
                               " twice");
      }
    }
  }
  return out;
}

// The host of every rank, in rank order, and each component's task count.
Status RankHosts(const EnvLookup& env, int64_t components, std::vector<std::string>* hosts,
                 std::vector<int64_t>* per_component) {
  for (int64_t k = 0; k < components; ++k) {
    const std::string suffix = components > 1 ? "_HET_GROUP_" + std::to_string(k) : "";
    ASSIGN_OR_RETURN(std::string list, Required(env, "SLURM_JOB_NODELIST" + suffix));
    ASSIGN_OR_RETURN(std::string counts, Required(env, "SLURM_TASKS_PER_NODE" + suffix));
    ASSIGN_OR_RETURN(std::vector<std::string> names, ExpandHostList(list));
    ASSIGN_OR_RETURN(std::vector<int> per_host, ExpandTasksPerNode(counts));
    if (names.size() != per_host.size()) {
      return InvalidArgument("SLURM_TASKS_PER_NODE" + suffix + " has " +
                             std::to_string(per_host.size()) + " hosts, SLURM_JOB_NODELIST" +
                             suffix + " " + std::to_string(names.size()));
    }
    int64_t tasks = 0;
    for (size_t i = 0; i < names.size(); ++i) {
      for (int t = 0; t < per_host[i]; ++t) hosts->push_back(names[i]);
      tasks += per_host[i];
    }
    per_component->push_back(tasks);
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> ExpandHostList(std::string_view list, size_t limit) {
  std::vector<std::string> out;
  for (std::string_view item : TopLevelItems(list)) {
    const size_t open = item.find('[');
    if (open == std::string_view::npos) {
      if (out.size() >= limit) return InvalidArgument("host list names too many hosts");
      out.emplace_back(item);
      continue;
    }
    const size_t close = item.find(']', open);
    if (close == std::string_view::npos) {
      return InvalidArgument("host list: \"" + std::string(item) + "\" has no closing ']'");
    }
    std::string_view prefix = item.substr(0, open), suffix = item.substr(close + 1);
    for (std::string_view range : TopLevelItems(item.substr(open + 1, close - open - 1))) {
      RETURN_IF_ERROR(AppendRange(prefix, range, suffix, limit, &out));
    }
  }
  if (out.empty()) return InvalidArgument("host list is empty");
  return out;
}

Result<std::vector<int>> ExpandTasksPerNode(std::string_view counts, size_t limit) {
  std::vector<int> out;
  for (std::string_view item : TopLevelItems(counts)) {
    int64_t repeat = 1;
    const size_t paren = item.find("(x");
    if (paren != std::string_view::npos) {
      if (item.back() != ')')
        return InvalidArgument("tasks per node: bad \"" + std::string(item) + "\"");
      ASSIGN_OR_RETURN(repeat,
                       Number(item.substr(paren + 2, item.size() - paren - 3), "tasks per node"));
      item = item.substr(0, paren);
    }
    ASSIGN_OR_RETURN(int64_t n, Number(item, "tasks per node"));
    if (n > 100000 || out.size() + static_cast<size_t>(repeat) > limit) {
      return InvalidArgument("tasks per node: too many");
    }
    out.insert(out.end(), static_cast<size_t>(repeat), static_cast<int>(n));
  }
  if (out.empty()) return InvalidArgument("tasks per node is empty");
  return out;
}

Result<std::vector<int>> ExpandPorts(std::string_view ports, size_t limit) {
  std::vector<int> out;
  for (std::string_view item : TopLevelItems(ports)) {
    const size_t dash = item.find('-');
    ASSIGN_OR_RETURN(int64_t from, Number(item.substr(0, dash), "ports"));
    int64_t to = from;
    if (dash != std::string_view::npos) {
      ASSIGN_OR_RETURN(to, Number(item.substr(dash + 1), "ports"));
    }
    if (from < 1 || to > 65535 || to < from || out.size() + (to - from) >= limit) {
      return InvalidArgument("ports: bad range \"" + std::string(item) + "\"");
    }
    for (int64_t p = from; p <= to; ++p) out.push_back(static_cast<int>(p));
  }
  if (out.empty()) return InvalidArgument("no reserved ports");
  return out;
}

Result<SlurmTopology> SingleReplicaTopology(const EnvLookup& env, const std::string& host,
                                            int port) {
  ASSIGN_OR_RETURN(std::string pools_text, Required(env, "TY_SLURM_POOLS"));
  ASSIGN_OR_RETURN(std::vector<PoolRun> runs, PoolRuns(pools_text));
  if (runs.size() != 1 || runs[0].count != 1) {
    return InvalidArgument("TY_SLURM_POOLS: \"" + pools_text + "\" is not one replica");
  }
  if (host.empty() || port <= 0 || port > 65535) return InvalidArgument("no host or port");
  SlurmTopology t;
  t.pool = runs[0].pool;
  t.index = 0;
  t.port = port;
  t.addresses.resize(static_cast<size_t>(t.pool) + 1);
  t.addresses[t.pool] = {host + ":" + std::to_string(port)};
  return t;
}

Result<SlurmTopology> TopologyFromSlurmEnv(const EnvLookup& env) {
  ASSIGN_OR_RETURN(std::string pools_text, Required(env, "TY_SLURM_POOLS"));
  ASSIGN_OR_RETURN(std::vector<PoolRun> runs, PoolRuns(pools_text));
  ASSIGN_OR_RETURN(std::string ports_text, Required(env, "SLURM_STEP_RESV_PORTS"));
  ASSIGN_OR_RETURN(std::vector<int> ports, ExpandPorts(ports_text));
  ASSIGN_OR_RETURN(std::string rank_text, Required(env, "SLURM_PROCID"));
  ASSIGN_OR_RETURN(int64_t rank, Number(rank_text, "SLURM_PROCID"));
  const std::string het = Var(env, "SLURM_HET_SIZE");
  int64_t components = 1;
  if (!het.empty()) {
    ASSIGN_OR_RETURN(components, Number(het, "SLURM_HET_SIZE"));
  }
  if (components < 1 || components > 64) return InvalidArgument("SLURM_HET_SIZE out of range");
  if (components > 1 && static_cast<size_t>(components) != runs.size()) {
    return InvalidArgument("SLURM_HET_SIZE is " + std::to_string(components) +
                           " but TY_SLURM_POOLS names " + std::to_string(runs.size()) + " pools");
  }
  std::vector<std::string> hosts;
  std::vector<int64_t> per_component;
  RETURN_IF_ERROR(RankHosts(env, components, &hosts, &per_component));
  int64_t wanted = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    wanted += runs[i].count;
    if (components > 1 && per_component[i] != runs[i].count) {
      return InvalidArgument("component " + std::to_string(i) + " has " +
                             std::to_string(per_component[i]) + " tasks, pool " +
                             std::to_string(runs[i].pool) + " " + std::to_string(runs[i].count) +
                             " replicas");
    }
  }
  if (static_cast<int64_t>(hosts.size()) != wanted) {
    return InvalidArgument("the step has " + std::to_string(hosts.size()) +
                           " tasks, TY_SLURM_POOLS " + std::to_string(wanted));
  }
  if (ports.size() < hosts.size()) {
    return InvalidArgument("SLURM_STEP_RESV_PORTS has " + std::to_string(ports.size()) +
                           " ports for " + std::to_string(hosts.size()) + " tasks");
  }
  if (rank >= wanted)
    return InvalidArgument("SLURM_PROCID " + rank_text + " is past the last task");
  SlurmTopology out;
  size_t r = 0;
  for (const PoolRun& run : runs) {
    if (out.addresses.size() <= static_cast<size_t>(run.pool)) out.addresses.resize(run.pool + 1);
    for (int64_t i = 0; i < run.count; ++i, ++r) {
      out.addresses[run.pool].push_back(hosts[r] + ":" + std::to_string(ports[r]));
      if (static_cast<int64_t>(r) == rank) {
        out.pool = run.pool;
        out.index = static_cast<int>(i);
        out.port = ports[r];
      }
    }
  }
  return out;
}

}  // namespace ty::executor
