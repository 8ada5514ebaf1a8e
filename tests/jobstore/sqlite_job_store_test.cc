// SqliteJobStore behaviour beyond the shared contract: durability across reopen,
// WAL, schema versioning and concurrent writers on one file.
#include "jobstore/sqlite_job_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "jobstore/job_store_test_util.h"

namespace ty::jobstore {
namespace {

using testing::ExpectStoredJob;
using testing::FullJob;

class SqliteJobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = std::filesystem::temp_directory_path() / "ty-store-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/jobs.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<SqliteJobStore> OpenOrDie() {
    Result<std::unique_ptr<SqliteJobStore>> store = SqliteJobStore::Open(path_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // Runs `sql` on a separate raw connection; returns the first column of the first row.
  std::string RawQuery(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    std::string out;
    char* err = nullptr;
    int rc = sqlite3_exec(
        db, sql.c_str(),
        [](void* p, int n, char** v, char**) {
          if (n > 0 && v[0] && static_cast<std::string*>(p)->empty()) {
            *static_cast<std::string*>(p) = v[0];
          }
          return 0;
        },
        &out, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
    return out;
  }

  std::string dir_;
  std::string path_;
};

TEST_F(SqliteJobStoreTest, DataSurvivesReopen) {
  model::Job job = FullJob("1", model::Dialect::kMlV1, "p", "train");
  {
    auto store = OpenOrDie();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->CreateJob(job).ok());
    ASSERT_TRUE(store->AppendEvent("1", {5, "state", "Job is queued."}).ok());
  }
  auto store = OpenOrDie();
  ASSERT_NE(store, nullptr);
  Result<model::Job> got = store->FindMlJob("p", "train");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ExpectStoredJob(job, *got);
  Result<std::vector<model::JobEvent>> events = store->ListEvents("1");
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].message, "Job is queued.");
  // Sequence numbers continue after a reopen.
  ASSERT_TRUE(store->AppendEvent("1", {6, "state", "Job is running."}).ok());
  events = store->ListEvents("1");
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[1].message, "Job is running.");
}

TEST_F(SqliteJobStoreTest, UsesWal) {
  auto store = OpenOrDie();
  ASSERT_NE(store, nullptr);
  // journal_mode=WAL is persistent, so a second connection sees it too.
  EXPECT_EQ(RawQuery("PRAGMA journal_mode"), "wal");
}

TEST_F(SqliteJobStoreTest, MigratesEmptyFileAndReopensIdempotently) {
  { std::ofstream touch(path_); }  // An existing, empty file.
  {
    auto store = OpenOrDie();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->CreateJob(FullJob("1")).ok());
  }
  EXPECT_EQ(RawQuery("PRAGMA user_version"), std::to_string(SqliteJobStore::kSchemaVersion));
  EXPECT_EQ(RawQuery("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                     "('jobs', 'replicas', 'events')"),
            "3");
  std::string schema = RawQuery("SELECT group_concat(sql, ';') FROM sqlite_master");
  for (int i = 0; i < 2; ++i) {
    auto store = OpenOrDie();
    ASSERT_NE(store, nullptr);
    EXPECT_TRUE(store->GetJob("1").ok());
  }
  EXPECT_EQ(RawQuery("PRAGMA user_version"), std::to_string(SqliteJobStore::kSchemaVersion));
  EXPECT_EQ(RawQuery("SELECT group_concat(sql, ';') FROM sqlite_master"), schema);
}

TEST_F(SqliteJobStoreTest, RefusesNewerSchema) {
  { ASSERT_NE(OpenOrDie(), nullptr); }
  RawQuery("PRAGMA user_version = " + std::to_string(SqliteJobStore::kSchemaVersion + 1));
  Result<std::unique_ptr<SqliteJobStore>> store = SqliteJobStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  // Refusing must not touch the file.
  EXPECT_EQ(RawQuery("PRAGMA user_version"), std::to_string(SqliteJobStore::kSchemaVersion + 1));
}

TEST_F(SqliteJobStoreTest, RefusesNonDatabaseFile) {
  {
    std::ofstream junk(path_);
    junk << std::string(4096, 'x');
  }
  Result<std::unique_ptr<SqliteJobStore>> store = SqliteJobStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kDataLoss) << store.status().ToString();
}

// Issue 30 item 7: rows written straight into the database, damaged or hostile, are set
// aside with why; every other job is still listed and loaded, and nothing past the
// bounds is read into memory. On 3c2a683 one such row failed every list and the
// daemon's start.
TEST_F(SqliteJobStoreTest, PoisonedRowsAreSetAsideAndTheRestServed) {
  {
    auto store = OpenOrDie();
    ASSERT_NE(store, nullptr);
    for (int i = 1; i <= 9; ++i) ASSERT_TRUE(store->CreateJob(FullJob(std::to_string(i))).ok());
  }
  for (const std::string& poison : std::vector<std::string>{
           "UPDATE jobs SET state = 'BOGUS' WHERE uid = '2'",
           "UPDATE jobs SET kind = 'ALIEN' WHERE uid = '3'",
           "UPDATE jobs SET trials_json = 'not json' WHERE uid = '4'",
           "UPDATE jobs SET spec_json = CAST(zeroblob(70000000) AS TEXT) WHERE uid = '5'",
           "UPDATE replicas SET pool = 99 WHERE uid = '6'",
           "UPDATE jobs SET attempt = 1000000000000 WHERE uid = '7'",
           "UPDATE replicas SET state = 'ZOMBIE' WHERE uid = '8'",
           R"(UPDATE jobs SET images_json = '[{"image":5}]' WHERE uid = '9')"}) {
    RawQuery(poison);
  }
  auto store = OpenOrDie();
  ASSERT_NE(store, nullptr);
  std::vector<std::string> live;
  Result<std::vector<model::Job>> loaded = store->ListLiveJobs();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  for (const model::Job& j : *loaded) live.push_back(j.uid);
  EXPECT_EQ(live, (std::vector<std::string>{"1", "9"}));
  JobStore::PageQuery q;
  q.project = FullJob("1").project;
  q.location = "us-central1";
  Result<std::vector<model::Job>> page = store->ListJobsPage(q);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->size(), 4u) << "1, 6, 8 and 9: a page reads no replicas";
  const std::vector<std::string> aside = store->SetAsideRows();
  ASSERT_EQ(aside.size(), 7u) << ::testing::PrintToString(aside);
  EXPECT_NE(aside[3].find("job 5: "), std::string::npos) << aside[3];
  EXPECT_NE(aside[3].find("more than any request makes"), std::string::npos) << aside[3];
  EXPECT_EQ(store->GetJob("2").status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(store->GetJob("1").ok());
  Result<model::Job> nine = store->GetJob("9");
  ASSERT_TRUE(nine.ok()) << "an unreadable image record only informs describe";
  EXPECT_TRUE(nine->images.empty());
}

// Start-up reads the live jobs and the finished ones with unwritten lines through the
// partial index, never by scanning every job ever run.
TEST_F(SqliteJobStoreTest, StartUpReadsThroughTheLiveIndex) {
  ASSERT_NE(OpenOrDie(), nullptr);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  const std::string sql =
      std::string("EXPLAIN QUERY PLAN SELECT uid FROM jobs ") + SqliteJobStore::kLiveJobsQuery;
  ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string plan;
  while (sqlite3_step(st) == SQLITE_ROW) {
    plan += reinterpret_cast<const char*>(sqlite3_column_text(st, 3));
    plan += "\n";
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_NE(plan.find("INDEX jobs_live"), std::string::npos) << plan;
}

// The outbox (model/outbox.h) is read like every JSON column: a huge or unreadable one
// sets its row aside, and is never read whole into memory.
TEST_F(SqliteJobStoreTest, AHostileOutboxSetsItsRowAside) {
  {
    auto store = OpenOrDie();
    ASSERT_NE(store, nullptr);
    for (const char* uid : {"1", "2", "3"}) ASSERT_TRUE(store->CreateJob(FullJob(uid)).ok());
  }
  RawQuery("UPDATE jobs SET outbox_json = CAST(zeroblob(70000000) AS TEXT) WHERE uid = '2'");
  RawQuery(R"(UPDATE jobs SET outbox_json = '{"lines":[{"seq":"x"}]}' WHERE uid = '3')");
  auto store = OpenOrDie();
  ASSERT_NE(store, nullptr);
  Result<std::vector<model::Job>> loaded = store->ListLiveJobs();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ((*loaded)[0].uid, "1");
  const std::vector<std::string> aside = store->SetAsideRows();
  ASSERT_EQ(aside.size(), 2u) << ::testing::PrintToString(aside);
  EXPECT_NE(aside[0].find("more than any request makes"), std::string::npos) << aside[0];
  EXPECT_NE(aside[1].find("outbox"), std::string::npos) << aside[1];
}

TEST_F(SqliteJobStoreTest, DeleteCascadesOnDisk) {
  auto store = OpenOrDie();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateJob(FullJob("1")).ok());
  ASSERT_TRUE(store->AppendEvent("1", {1, "state", "x"}).ok());
  EXPECT_EQ(RawQuery("SELECT COUNT(*) FROM replicas"), "3");
  ASSERT_TRUE(store->DeleteJob("1", 1).ok());
  EXPECT_EQ(RawQuery("SELECT COUNT(*) FROM replicas"), "0");
  EXPECT_EQ(RawQuery("SELECT COUNT(*) FROM events"), "0");
}

// Each writer stamps its job with its own id everywhere; a torn update would mix
// stamps between the job row and its replica rows.
void ExpectConsistent(const model::Job& job) {
  int stamp = job.attempt;
  EXPECT_EQ(job.update_time, stamp);
  ASSERT_EQ(job.replicas.size(), static_cast<size_t>(stamp));
  for (const model::ReplicaRecord& r : job.replicas) {
    EXPECT_EQ(r.attempt, stamp);
    EXPECT_EQ(r.handle, "writer-" + std::to_string(stamp));
  }
}

model::Job Stamped(int stamp, int iteration) {
  model::Job job = FullJob("1");
  job.attempt = stamp;
  job.update_time = stamp;
  job.end_time = iteration;
  job.replicas.clear();
  for (int i = 0; i < stamp; ++i) {
    model::ReplicaRecord r;
    r.index = i;
    r.attempt = stamp;
    r.handle = "writer-" + std::to_string(stamp);
    job.replicas.push_back(r);
  }
  return job;
}

void RunConcurrentWriters(const std::vector<JobStore*>& stores) {
  ASSERT_TRUE(stores[0]->CreateJob(Stamped(1, 0)).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      JobStore* store = stores[t % stores.size()];
      for (int i = 0; i < 50; ++i) {
        Status s = store->UpdateJob(Stamped(t + 1, i));
        EXPECT_TRUE(s.ok()) << s.ToString();
        Result<model::Job> got = store->GetJob("1");
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        ExpectConsistent(*got);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  Result<model::Job> final_job = stores[0]->GetJob("1");
  ASSERT_TRUE(final_job.ok());
  ExpectConsistent(*final_job);
  EXPECT_EQ(final_job->end_time, 49);  // Every writer's last write was its 50th.
}

TEST_F(SqliteJobStoreTest, ConcurrentUpdatesThroughOneStoreStayConsistent) {
  auto store = OpenOrDie();
  ASSERT_NE(store, nullptr);
  RunConcurrentWriters({store.get()});
}

TEST_F(SqliteJobStoreTest, ConcurrentUpdatesThroughSeparateConnectionsStayConsistent) {
  std::vector<std::unique_ptr<SqliteJobStore>> owned;
  std::vector<JobStore*> stores;
  for (int i = 0; i < 4; ++i) {
    owned.push_back(OpenOrDie());
    ASSERT_NE(owned.back(), nullptr);
    stores.push_back(owned.back().get());
  }
  RunConcurrentWriters(stores);
}

}  // namespace
}  // namespace ty::jobstore

namespace ty::jobstore::testing {
namespace {

// A file written by schema v2 (before the list fields) is migrated: the new columns
// are filled from each job's wire JSON, so old jobs list and filter like new ones.
TEST(SqliteMigrationTest, Version3BackfillsListFieldsFromTheStoredSpec) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("ty-migrate-" + std::to_string(::getpid()) + ".db"))
                         .string();
  std::filesystem::remove(path);
  {
    auto store = SqliteJobStore::Open(path);
    ASSERT_TRUE(store.ok());
    model::Job job = FullJob("1700000000000000001");
    job.spec_json = R"({"displayName":"old job","labels":{"team":"nlp"},"jobSpec":{}})";
    ASSERT_TRUE((*store)->CreateJob(job).ok());
    model::Job broken = FullJob("1700000000000000002");
    broken.spec_json = "not json";
    ASSERT_TRUE((*store)->CreateJob(broken).ok());
  }
  {
    // Back to what v2 had: no list fields.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    for (const char* sql :
         {"DROP INDEX jobs_by_scope", "DROP INDEX jobs_live", "DROP INDEX jobs_ended",
          "ALTER TABLE jobs DROP COLUMN uid_num", "ALTER TABLE jobs DROP COLUMN display_name",
          "ALTER TABLE jobs DROP COLUMN labels_json", "ALTER TABLE jobs DROP COLUMN spec_record",
          "ALTER TABLE jobs DROP COLUMN grants_json", "ALTER TABLE jobs DROP COLUMN preemptions",
          "ALTER TABLE jobs DROP COLUMN trials_json", "ALTER TABLE jobs DROP COLUMN study_uid",
          "ALTER TABLE jobs DROP COLUMN trial_id", "DROP TABLE deletions",
          "ALTER TABLE jobs DROP COLUMN study_json", "ALTER TABLE jobs DROP COLUMN kind",
          "ALTER TABLE jobs DROP COLUMN images_json", "ALTER TABLE jobs DROP COLUMN outbox_json",
          "PRAGMA user_version = 2"}) {
      ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    }
    sqlite3_close(db);
  }
  auto store = SqliteJobStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Result<model::Job> job = (*store)->GetJob("1700000000000000001");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->spec.display_name, "old job");
  EXPECT_EQ(job->spec.labels.at("team"), "nlp");
  Result<model::Job> broken = (*store)->GetJob("1700000000000000002");
  ASSERT_TRUE(broken.ok());
  EXPECT_TRUE(broken->spec.labels.empty());
  JobStore::PageQuery q;
  q.project = "proj";
  q.location = "us-central1";
  Result<std::vector<model::Job>> page = (*store)->ListJobsPage(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].uid, "1700000000000000002");
  std::filesystem::remove(path);
}

// A file written before records stored their kind (v8) is migrated: each row's kind is
// read once from what told it before (a trial's study uid, the top-level keys of its
// canonical JSON), so lists and reads need no search in the JSON any more.
TEST(SqliteMigrationTest, Version9StoresEachRecordsKind) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("ty-migrate-kind-" + std::to_string(::getpid()) + ".db"))
                         .string();
  std::filesystem::remove(path);
  struct Row {
    const char* uid;
    model::Dialect dialect;
    const char* spec_json;
    const char* study_uid;
    model::JobKind want;
  };
  const std::vector<Row> rows = {
      {"1700000000000000001", model::Dialect::kVertex, R"({"jobSpec":{"args":["studySpec"]}})", "",
       model::JobKind::kJob},
      {"1700000000000000002", model::Dialect::kVertex, R"({"studySpec":{},"trialJobSpec":{}})", "",
       model::JobKind::kStudy},
      {"1700000000000000003", model::Dialect::kVertex,
       R"({"trainingTaskDefinition":"x","trainingTaskInputs":{}})", "", model::JobKind::kPipeline},
      {"1700000000000000004", model::Dialect::kMlV1,
       R"({"jobId":"s","trainingInput":{"hyperparameters":{}}})", "", model::JobKind::kStudy},
      {"1700000000000000005", model::Dialect::kMlV1,
       R"({"jobId":"t","trainingInput":{"args":["\"hyperparameters\":"]}})", "",
       model::JobKind::kJob},
      {"1700000000000000006", model::Dialect::kVertex, R"({"studySpec":{},"trialJobSpec":{}})",
       "1700000000000000002", model::JobKind::kTrial},
  };
  {
    auto store = SqliteJobStore::Open(path);
    ASSERT_TRUE(store.ok());
    for (const Row& r : rows) {
      model::Job job = FullJob(r.uid);
      job.dialect = r.dialect;
      job.spec.job_id = r.dialect == model::Dialect::kMlV1 ? std::string("id") + r.uid : "";
      job.spec_json = r.spec_json;
      job.study_uid = r.study_uid;
      ASSERT_TRUE((*store)->CreateJob(job).ok()) << r.uid;
    }
  }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    for (const char* sql :
         {"ALTER TABLE jobs DROP COLUMN kind", "ALTER TABLE jobs DROP COLUMN images_json",
          "DROP INDEX jobs_live", "DROP INDEX jobs_ended",
          "ALTER TABLE jobs DROP COLUMN outbox_json", "PRAGMA user_version = 8"}) {
      ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    }
    sqlite3_close(db);
  }
  auto store = SqliteJobStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (const Row& r : rows) {
    Result<model::Job> job = (*store)->GetJob(r.uid);
    ASSERT_TRUE(job.ok()) << r.uid;
    EXPECT_EQ(model::JobKindName(job->kind), model::JobKindName(r.want)) << r.spec_json;
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace ty::jobstore::testing
