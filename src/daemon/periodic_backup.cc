#include "daemon/periodic_backup.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <vector>

namespace ty::daemon {
namespace {

std::string UtcStamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

}  // namespace

PeriodicBackup::PeriodicBackup(service::JobService* service, std::string kept_dir,
                               DurationMicros every, int keep)
    : service_(service), kept_dir_(std::move(kept_dir)), every_(every), keep_(std::max(1, keep)) {
  thread_ = std::thread([this] { Run(); });
}

PeriodicBackup::~PeriodicBackup() { Stop(); }

void PeriodicBackup::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PeriodicBackup::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::microseconds(every_), [this] { return stopping_; })) {
    lock.unlock();
    TakeOne();
    lock.lock();
  }
}

void PeriodicBackup::TakeOne() {
  const auto start = std::chrono::steady_clock::now();
  Result<std::string> made = service_->BackupStore();
  if (!made.ok()) {
    spdlog::error("backup: {}", made.status().ToString());
    return;
  }
  std::error_code ec;
  std::filesystem::create_directories(kept_dir_, ec);
  const std::string kept = kept_dir_ + "/trainyard-" + UtcStamp() + ".db";
  std::filesystem::rename(*made, kept, ec);
  if (ec) {
    spdlog::error("backup: cannot keep {} as {}: {}", *made, kept, ec.message());
    std::filesystem::remove(*made, ec);
    return;
  }
  // Oldest first by name (the UTC stamp sorts as time); beyond `keep_` they go.
  std::vector<std::filesystem::path> all;
  for (const auto& e : std::filesystem::directory_iterator(kept_dir_, ec)) {
    if (e.path().extension() == ".db") all.push_back(e.path());
  }
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i + static_cast<size_t>(keep_) < all.size(); ++i) {
    std::filesystem::remove(all[i], ec);
  }
  spdlog::info("backup: the job store copied to {} in {:.2f} s", kept,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace ty::daemon
