// Times what the daemon's start-up store check and `trainyard admin backup` cost on a
// data directory (bench/store_check fills one with 100,000 jobs first): SQLite's
// quick_check, the list of known uids, and the online backup, each against a baseline
// measured in the same run on the same file: reading the database file once
// (sequentially, into the page cache already warm from the fill).
//
// usage: store_check_time DATA_DIR
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "jobstore/sqlite_job_store.h"

namespace {

double Seconds(const std::chrono::steady_clock::time_point& since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double ReadFileSeconds(const std::string& path) {
  const auto t0 = std::chrono::steady_clock::now();
  std::ifstream in(path, std::ios::binary);
  std::vector<char> block(1 << 20);
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
  }
  return Seconds(t0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
    return 2;
  }
  const std::string db = std::string(argv[1]) + "/trainyard.db";
  auto store = ty::jobstore::SqliteJobStore::Open(db);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  const double read_s = ReadFileSeconds(db);
  auto t0 = std::chrono::steady_clock::now();
  auto check = (*store)->CheckIntegrity(60 * 1000000);
  const double check_s = Seconds(t0);
  t0 = std::chrono::steady_clock::now();
  auto known = (*store)->ListKnownUids();
  const double uids_s = Seconds(t0);
  const std::string copy = std::string(argv[1]) + "/bench-backup.db";
  std::filesystem::remove(copy);
  t0 = std::chrono::steady_clock::now();
  ty::Status backup = (*store)->BackupTo(copy);
  const double backup_s = Seconds(t0);
  if (!check.ok() || !known.ok() || !backup.ok()) {
    std::fprintf(stderr, "a step failed\n");
    return 1;
  }
  const auto db_bytes = std::filesystem::file_size(db);
  const auto copy_bytes = std::filesystem::file_size(copy);
  std::filesystem::remove(copy);
  std::printf("store: %zu jobs, %.1f MB\n", known->jobs.size(), db_bytes / 1e6);
  std::printf("baseline (read the file once): %.3f s\n", read_s);
  std::printf("quick_check: %.3f s (%s, %.1fx the read)\n", check_s,
              check->ok ? "ok" : check->detail.c_str(), check_s / read_s);
  std::printf("known uids: %.3f s (%.1fx the read)\n", uids_s, uids_s / read_s);
  std::printf("backup: %.3f s, %.1f MB (%.1fx the read)\n", backup_s, copy_bytes / 1e6,
              backup_s / read_s);
  return 0;
}
