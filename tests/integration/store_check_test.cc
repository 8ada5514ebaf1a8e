// Issue 31 item 5: a damaged store is never loss without a word. Each case damages a
// real daemon's data directory as the probe did, then starts trainyardd on it:
// it must refuse, saying what it found and how to go on, and keep every file; with
// --accept-store-loss it starts, naming what is lost. On d2135ab every case started
// silently with /healthz ok (and the truncated database's intact WAL was deleted).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <thread>
#include <vector>

#include "integration/daemon_harness.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kJobs[] = "/v1/projects/store/locations/us-central1/customJobs";

class StoreCheckTest : public ::testing::Test {
 protected:
  // Three finished jobs (their logs on disk), then the daemon killed: what it wrote
  // since its last checkpoint is only in the WAL.
  void SetUp() override {
    daemon_ = std::make_unique<Daemon>(std::vector<std::string>{"--executor", "process"});
    for (int i = 0; i < 3; ++i) {
      nlohmann::json body = {
          {"displayName", "kept"},
          {"jobSpec",
           {{"workerPoolSpecs",
             {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
               {"replicaCount", 1},
               {"containerSpec", {{"imageUri", "local"}, {"command", {"true"}}}}}}}}}};
      HttpReply made = daemon_->Post(kJobs, body.dump());
      ASSERT_EQ(made.status, 200) << made.body;
      uids_.push_back(IdOf(made.Json()));
      daemon_->WaitForField(std::string(kJobs) + "/" + uids_.back(), "state",
                            {"JOB_STATE_SUCCEEDED"}, 30);
    }
    data_ = daemon_->data_dir();
  }
  void KillDaemon() {
    ASSERT_EQ(kill(daemon_->pid(), SIGKILL), 0);
    daemon_->Stop();  // Reaps it.
  }
  // trainyardd on the damaged directory for at most 3 s (124: still serving then).
  ProcessRun Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {"timeout",  "3",           BinaryDir() + "/bin/trainyardd",
                                     "--listen", "127.0.0.1:0", "--data-dir",
                                     data_,      "--executor",  "process"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunProcess(argv, {}, 30);
  }

  static std::string ReadAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void ExpectADamagedWalIsSaidAndKept(const std::function<void(const std::string&)>& damage);

  std::unique_ptr<Daemon> daemon_;
  std::vector<std::string> uids_;
  std::string data_;
};

TEST_F(StoreCheckTest, JobsLostWithTheWalAreNamedAndTheirLogsKeptAside) {
  KillDaemon();
  fs::remove(data_ + "/trainyard.db-wal");
  fs::remove(data_ + "/trainyard.db-shm");
  ProcessRun refused = Start();
  EXPECT_EQ(refused.rc, 1) << refused.err;
  EXPECT_THAT(refused.out + refused.err, HasSubstr("3 jobs have logs but no record in the store"));
  EXPECT_THAT(refused.out + refused.err, HasSubstr(uids_[0]));
  EXPECT_THAT(refused.out + refused.err, HasSubstr("--accept-store-loss"));
  EXPECT_TRUE(fs::exists(data_ + "/logs/" + uids_[0] + ".ndjson")) << "nothing deleted";

  ProcessRun accepted = Start({"--accept-store-loss"});
  EXPECT_EQ(accepted.rc, 124) << accepted.err;  // Serving when `timeout` ended it.
  EXPECT_THAT(accepted.out + accepted.err, HasSubstr("3 jobs are lost (--accept-store-loss)"));
  EXPECT_TRUE(fs::exists(data_ + "/logs/lost/" + uids_[0] + ".ndjson"));
  EXPECT_EQ(Start().rc, 124) << "once accepted, the next start is clean";
}

TEST_F(StoreCheckTest, AWalBesideAnEmptyDatabaseIsNeverDeleted) {
  KillDaemon();
  const auto wal_bytes = fs::file_size(data_ + "/trainyard.db-wal");
  ASSERT_GT(wal_bytes, 0u);
  fs::resize_file(data_ + "/trainyard.db", 0);
  ProcessRun refused = Start();
  EXPECT_EQ(refused.rc, 1) << refused.err;
  EXPECT_THAT(refused.out + refused.err,
              HasSubstr("trainyard.db is empty but its write-ahead log holds"));
  ASSERT_TRUE(fs::exists(data_ + "/trainyard.db-wal")) << "the WAL is kept";
  EXPECT_EQ(fs::file_size(data_ + "/trainyard.db-wal"), wal_bytes);
  // With the loss accepted the WAL is kept aside, never deleted, and the daemon starts.
  ProcessRun accepted = Start({"--accept-store-loss"});
  EXPECT_EQ(accepted.rc, 124) << accepted.out << accepted.err;
  bool kept_aside = false;
  for (const auto& e : fs::directory_iterator(data_)) {
    kept_aside |= e.path().filename().string().rfind("trainyard.db-wal.lost-", 0) == 0 &&
                  fs::file_size(e.path()) == wal_bytes;
  }
  EXPECT_TRUE(kept_aside);
}

// The WAL cut short, and 8 KiB of garbage inside it (the two other probes):
// SQLite replays the frames before the damage and drops the rest, so the last jobs'
// records are gone while their logs are there. The start is refused naming them, and
// the WAL as it was is kept beside the store, byte for byte, for whoever repairs it.
void StoreCheckTest::ExpectADamagedWalIsSaidAndKept(
    const std::function<void(const std::string&)>& damage) {
  KillDaemon();
  const std::string wal = data_ + "/trainyard.db-wal";
  ASSERT_GT(fs::file_size(wal), 16384u);
  damage(wal);
  const std::string damaged = ReadAll(wal);
  ProcessRun refused = Start();
  EXPECT_EQ(refused.rc, 1) << refused.err;
  const std::string said = refused.out + refused.err;
  EXPECT_THAT(said, HasSubstr("have logs but no record in the store"));
  EXPECT_THAT(said, HasSubstr(uids_[2])) << "the last job's record was in the damaged part";
  EXPECT_THAT(said, HasSubstr("--accept-store-loss"));
  bool kept = ReadAll(wal) == damaged;
  for (const auto& e : fs::directory_iterator(data_)) {
    kept |= e.path().filename().string().rfind("trainyard.db-wal.", 0) == 0 &&
            ReadAll(e.path().string()) == damaged;
  }
  EXPECT_TRUE(kept) << "the damaged WAL is kept as it was";
  ProcessRun accepted = Start({"--accept-store-loss"});
  EXPECT_EQ(accepted.rc, 124) << accepted.out << accepted.err;
  EXPECT_THAT(accepted.out + accepted.err, HasSubstr("lost (--accept-store-loss)"));
}

TEST_F(StoreCheckTest, ATruncatedWalIsSaidAndKept) {
  ExpectADamagedWalIsSaidAndKept(
      [](const std::string& wal) { fs::resize_file(wal, fs::file_size(wal) / 2); });
}

TEST_F(StoreCheckTest, GarbageInsideTheWalIsSaidAndKept) {
  ExpectADamagedWalIsSaidAndKept([](const std::string& wal) {
    std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(wal) / 2));
    const std::string garbage(8192, '\x5a');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  });
}

TEST_F(StoreCheckTest, ADamagedDatabaseIsSaidWithSQLitesWords) {
  daemon_->Stop();  // A clean stop: everything checkpointed into trainyard.db.
  const std::string db = data_ + "/trainyard.db";
  const auto size = fs::file_size(db);
  ASSERT_GT(size, 8192u);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    const std::string garbage(8192, '\x5a');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  ProcessRun refused = Start();
  EXPECT_EQ(refused.rc, 1) << refused.err;
  EXPECT_THAT(refused.out + refused.err, HasSubstr("the job store cannot be trusted"));
}

TEST_F(StoreCheckTest, AReadOnlyDataDirectorySaysSo) {
  daemon_->Stop();
  if (geteuid() != 0) GTEST_SKIP() << "needs root for a read-only bind mount";
  ASSERT_EQ(RunProcess({"mount", "--bind", data_, data_}).rc, 0);
  ProcessRun ro = RunProcess({"mount", "-o", "remount,bind,ro", data_});
  ProcessRun started = Start();
  RunProcess({"umount", data_});
  ASSERT_EQ(ro.rc, 0) << ro.err;
  EXPECT_EQ(started.rc, 1) << started.err;
  EXPECT_THAT(started.out + started.err, HasSubstr("is on a read-only filesystem"));
}

// `trainyard admin backup FILE` while a job runs, then the restore docs/operations.md gives: the
// daemon stopped, the copy put in place of trainyard.db (its WAL and shm removed), and
// every job is back, the running one recovered as it was.
TEST_F(StoreCheckTest, ABackupTakenWhileAJobRunsRestoresEveryJob) {
  nlohmann::json body = {
      {"displayName", "running"},
      {"jobSpec",
       {{"workerPoolSpecs",
         {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
           {"replicaCount", 1},
           {"containerSpec", {{"imageUri", "local"}, {"command", {"sleep", "30"}}}}}}}}}};
  HttpReply made = daemon_->Post(kJobs, body.dump());
  ASSERT_EQ(made.status, 200) << made.body;
  const std::string running = IdOf(made.Json());
  daemon_->WaitForField(std::string(kJobs) + "/" + running, "state", {"JOB_STATE_RUNNING"}, 30);
  const std::string copy = data_ + "/../backup.db";
  ProcessRun backup = RunProcess({BinaryDir() + "/bin/trainyard", "admin", "backup", copy},
                                 {{"TRAINYARD_API", daemon_->base()}});
  ASSERT_EQ(backup.rc, 0) << backup.out << backup.err;
  EXPECT_THAT(backup.out, HasSubstr("Backed up the job store to"));
  EXPECT_EQ(fs::status(copy).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_FALSE(fs::exists(data_ + "/backups") && !fs::is_empty(data_ + "/backups"))
      << "the daemon keeps no copy behind";

  daemon_->Stop();
  fs::remove(data_ + "/trainyard.db-wal");
  fs::remove(data_ + "/trainyard.db-shm");
  fs::copy_file(copy, data_ + "/trainyard.db", fs::copy_options::overwrite_existing);
  daemon_->Start({"--executor", "process"});
  for (const std::string& uid : uids_) {
    EXPECT_EQ(daemon_->Get(std::string(kJobs) + "/" + uid).Json().value("state", ""),
              "JOB_STATE_SUCCEEDED")
        << uid;
  }
  EXPECT_EQ(daemon_->Get(std::string(kJobs) + "/" + running).Json().value("state", ""),
            "JOB_STATE_RUNNING");
  daemon_->Post(std::string(kJobs) + "/" + running + ":cancel", "{}");
}

// Scheduled copies: every backup_every_minutes a copy in backups/kept, the newest
// `backup_keep` kept.
TEST(PeriodicBackupTest, CopiesAreTakenOnScheduleAndTheOldestRemoved) {
  Daemon d({"--executor", "process", "--backup-every-minutes", "0.01", "--backup-keep", "2"});
  const fs::path kept = fs::path(d.data_dir()) / "backups" / "kept";
  std::this_thread::sleep_for(std::chrono::seconds(4));  // About six copies.
  std::vector<fs::path> copies;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kept, ec)) copies.push_back(e.path());
  ASSERT_EQ(copies.size(), 2u) << d.Log();
  for (const fs::path& c : copies) {
    std::ifstream in(c, std::ios::binary);
    std::string head(15, '\0');
    in.read(head.data(), 15);
    EXPECT_EQ(head, "SQLite format 3") << c;
    EXPECT_EQ(fs::status(c).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
  }
  EXPECT_NE(d.Log().find("backup: the job store copied to"), std::string::npos);
}

}  // namespace
}  // namespace ty::testing
