// Scheduled copies of the job store (issue 31 item 5): every `every` a consistent copy
// (JobService::BackupStore, SQLite's online backup while jobs run) is kept in
// <data-dir>/backups/kept/ as trainyard-<UTC time>.db, the oldest removed beyond
// `keep`. Off unless the config asks (backup_every_minutes). Stop() returns promptly.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "common/time.h"
#include "service/job_service.h"

namespace ty::daemon {

class PeriodicBackup {
 public:
  PeriodicBackup(service::JobService* service, std::string kept_dir, DurationMicros every,
                 int keep);
  ~PeriodicBackup();  // Stops.
  void Stop();

 private:
  void Run();
  void TakeOne();

  service::JobService* const service_;
  const std::string kept_dir_;
  const DurationMicros every_;
  const int keep_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // Guarded by mu_.
  std::thread thread_;
};

}  // namespace ty::daemon
