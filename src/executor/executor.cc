#include "executor/executor.h"

namespace ty::executor {

std::string ReplicaName(const std::string& job_uid, int attempt, int pool, int index) {
  return "ty-" + job_uid + "-" + std::to_string(attempt) + "-" + std::to_string(pool) + "-" +
         std::to_string(index);
}

}  // namespace ty::executor
