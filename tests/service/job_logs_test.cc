// ReadJobLogs: one job's log with a cursor after every line, and a study's log merged
// from its own and its trials' logs, resumable line by line without loss or repeat.
#include "service/job_logs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "service/service_lines.h"

namespace ty::service {
namespace {

class JobLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("ty-joblogs-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    logs_ = std::move(logs::LogStore::Create(dir_.string()).value());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& uid, TimeMicros t, const std::string& message,
             const std::string& task = "workerpool0-0") {
    logs::LogEntry e;
    e.time = t;
    e.task = task;
    e.message = message;
    EXPECT_TRUE(logs_->Append(uid, e).ok());
  }

  // Every line from `cursor` on, one read per line (as a reconnecting client would).
  std::vector<std::string> OneByOne(const std::vector<LogSource>& sources, std::string* cursor,
                                    const std::string& task = "") {
    std::vector<std::string> out;
    for (int i = 0; i < 100; ++i) {
      auto page = ReadJobLogs(logs_.get(), sources, *cursor, task, 1);
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok() || page->lines.empty()) break;
      const JobLogLine& l = page->lines.front();
      out.push_back(std::to_string(l.trial_id) + ":" + l.entry.message);
      EXPECT_EQ(l.cursor, page->next_cursor);
      *cursor = l.cursor;
    }
    return out;
  }

  std::filesystem::path dir_;
  std::unique_ptr<logs::LogStore> logs_;
};

TEST_F(JobLogsTest, OneJobsLinesEachCarryTheCursorAfterThem) {
  Write("j", 10, "a");
  Write("j", 20, "b", "other");
  Write("j", 30, "c");
  const std::vector<LogSource> job = {{"j", 0}};
  auto page = ReadJobLogs(logs_.get(), job, "", "workerpool0-0", 0);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->lines.size(), 2u);
  // Resuming from the first line's cursor gives exactly the second.
  auto rest = ReadJobLogs(logs_.get(), job, page->lines[0].cursor, "workerpool0-0", 0);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->lines.size(), 1u);
  EXPECT_EQ(rest->lines[0].entry.message, "c");
  EXPECT_EQ(rest->lines[0].trial_id, 0);
  EXPECT_EQ(page->lines[1].cursor, page->next_cursor);
  // The cursor after a line does not depend on the read that returned it.
  auto first = ReadJobLogs(logs_.get(), job, "", "workerpool0-0", 1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->lines[0].cursor, page->lines[0].cursor);
}

TEST_F(JobLogsTest, AStudysLogMergesItsTrialsByTimeAndResumesExactly) {
  const std::vector<LogSource> study = {{"s", 0}, {"t1", 1}, {"t2", 2}};
  Write("s", 10, "trial 1 started", "service");
  Write("t1", 20, "one-a");
  Write("t2", 25, "two-a");
  Write("t1", 30, "one-b");
  Write("s", 40, "trial 1 succeeded", "service");
  std::string cursor;
  EXPECT_EQ(OneByOne(study, &cursor),
            (std::vector<std::string>{"0:trial 1 started", "1:one-a", "2:two-a", "1:one-b",
                                      "0:trial 1 succeeded"}));
  // A trial's line that arrives late, stamped before lines already served, comes next.
  Write("t2", 27, "two-late");
  Write("t1", 50, "one-c");
  EXPECT_EQ(OneByOne(study, &cursor), (std::vector<std::string>{"2:two-late", "1:one-c"}));
  EXPECT_TRUE(OneByOne(study, &cursor).empty());

  // Whole pages read the same lines; a task filter keeps only that task.
  auto all = ReadJobLogs(logs_.get(), study, "", "", 0);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->lines.size(), 7u);
  std::string service_cursor;
  EXPECT_EQ(OneByOne(study, &service_cursor, "service"),
            (std::vector<std::string>{"0:trial 1 started", "0:trial 1 succeeded"}));
}

TEST_F(JobLogsTest, AMalformedStudyCursorIsRejected) {
  const std::vector<LogSource> study = {{"s", 0}, {"t1", 1}};
  for (const char* bad : {"0~x=1", "0~=5", "0~1=zz"}) {
    auto page = ReadJobLogs(logs_.get(), study, bad, "", 0);
    EXPECT_EQ(page.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

// A restart writes the lines of the last commit's outbox the log lacks, each once, found
// from the end of the log however many unmarked service lines were written after them.
TEST_F(JobLogsTest, AStoredOutboxsMissingLinesAreWrittenOnce) {
  model::ServiceOutbox earlier;
  for (int i = 0; i < 3; ++i) earlier.Add("earlier " + std::to_string(i));
  WriteOutbox(logs_.get(), 100, "7", earlier);
  for (int i = 0; i < 100; ++i) WriteServiceLine(logs_.get(), 200, "7", "between", "INFO");
  model::ServiceOutbox last = earlier;
  last.lines.clear();
  for (int i = 0; i < 3; ++i) last.Add("last " + std::to_string(i));
  model::ServiceOutbox written_before_the_crash = last;
  written_before_the_crash.lines.resize(1);
  WriteOutbox(logs_.get(), 300, "7", written_before_the_crash);
  // More unmarked lines than the first read back holds: it reads further.
  for (int i = 0; i < 300; ++i) WriteServiceLine(logs_.get(), 400, "7", "after", "INFO");

  EXPECT_EQ(WriteMissingOutboxLines(logs_.get(), 500, "7", last), 2u);
  EXPECT_EQ(WriteMissingOutboxLines(logs_.get(), 600, "7", last), 0u) << "all there now";
  std::map<std::string, int> count;
  for (const logs::LogEntry& e : ReadServiceLines(logs_.get(), "7")) ++count[e.message];
  EXPECT_EQ(count["last 0"], 1);
  EXPECT_EQ(count["last 1"], 1);
  EXPECT_EQ(count["last 2"], 1);
  EXPECT_EQ(count["earlier 0"], 1);
  // A log that has none of them (the daemon died right after the commit) gets all.
  EXPECT_EQ(WriteMissingOutboxLines(logs_.get(), 700, "8", last), 3u);
}

}  // namespace
}  // namespace ty::service
