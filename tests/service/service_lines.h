// What the tests read back of a job's log: the service's own lines (task "service"),
// oldest first, as the controllers wrote them (service/job_logs.h).
#pragma once

#include <string>
#include <vector>

#include "logs/log_store.h"

namespace ty::service {

inline std::vector<logs::LogEntry> ReadServiceLines(logs::LogStore* logs, const std::string& uid) {
  std::vector<logs::LogEntry> out;
  logs->Scan(uid,
             [&](const logs::LogEntry& e) {
               if (e.stream == logs::LogStream::kService) out.push_back(e);
               return true;
             })
      .IgnoreError();
  return out;
}

}  // namespace ty::service
