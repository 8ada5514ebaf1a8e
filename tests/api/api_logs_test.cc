// Log endpoints: pages, follow streams, cursors and task filters.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "api/api_fixture.h"

namespace ty::api {
namespace {

using nlohmann::json;

class ApiLogsTest : public ApiFixture {
 protected:
  void Append(const std::string& uid, const std::string& task, const std::string& message) {
    logs::LogEntry entry;
    entry.time = SystemClock::Get()->Now();
    entry.task = task;
    entry.stream = logs::LogStream::kStdout;
    entry.severity = "INFO";
    entry.message = message;
    EXPECT_TRUE(logs_->Append(uid, entry).ok());
  }

  static std::vector<json> Lines(const std::string& body) {
    std::vector<json> out;
    std::istringstream in(body);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty()) out.push_back(json::parse(line));
    }
    return out;
  }
};

TEST_F(ApiLogsTest, PageWithCursorAndTaskFilter) {
  std::string id = CreateVertex("logs");
  std::string uid = UidOf(VertexRef(id));
  Append(uid, "workerpool0-0", "hello");
  Append(uid, "workerpool1-0", "from worker");
  Append(uid, "workerpool0-0", "world");

  // The service writes its own lines too (task "service"); look at the replicas'.
  std::string base = std::string(kVertex) + "/" + id + "/logs";
  Reply all = Get(base);
  ASSERT_EQ(all.status, 200) << all.body;
  json replica_entries = json::array();
  const json everything = all.json();
  for (const json& e : everything["entries"]) {
    if (e["taskName"] != "service") replica_entries.push_back(e);
  }
  ASSERT_EQ(replica_entries.size(), 3u) << all.body;
  all = Get(base + "?task=workerpool0-0");
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_EQ(all.content_type, "application/json; charset=UTF-8");
  json page = all.json();
  ASSERT_EQ(page["entries"].size(), 2u) << all.body;
  json first = page["entries"][0];
  EXPECT_EQ(first["message"], "hello");
  EXPECT_EQ(first["taskName"], "workerpool0-0");
  EXPECT_EQ(first["stream"], "stdout");
  EXPECT_EQ(first["severity"], "INFO");
  std::string ts = first["timestamp"];
  EXPECT_EQ(ts.back(), 'Z');
  ASSERT_TRUE(page.contains("nextCursor"));

  EXPECT_EQ(page["entries"][1]["message"], "world");

  Reply first_page = Get(base + "?task=workerpool0-0&pageSize=1");
  ASSERT_EQ(first_page.json()["entries"].size(), 1u);
  std::string cursor = first_page.json()["nextCursor"];
  Reply rest = Get(base + "?task=workerpool0-0&pageSize=2&cursor=" + cursor);
  ASSERT_EQ(rest.status, 200) << rest.body;
  ASSERT_EQ(rest.json()["entries"].size(), 1u) << rest.body;
  EXPECT_EQ(rest.json()["entries"][0]["message"], "world");
}

// ?tail=N: the newest lines first, then backwards by previousCursor; a forward read
// (or follow) goes on from the tail's nextCursor.
TEST_F(ApiLogsTest, TailPagesBackwardsAndForwardGoesOnFromIt) {
  std::string id = CreateVertex("tailed");
  std::string uid = UidOf(VertexRef(id));
  for (int i = 0; i < 25; ++i) Append(uid, "workerpool0-0", "line " + std::to_string(i));
  const std::string base = std::string(kVertex) + "/" + id + "/logs";
  json page = Get(base + "?task=workerpool0-0&tail=10").json();
  ASSERT_EQ(page["entries"].size(), 10u) << page.dump();
  EXPECT_EQ(page["entries"][0]["message"], "line 15");
  EXPECT_EQ(page["entries"][9]["message"], "line 24");
  EXPECT_TRUE(page["entries"][9].contains("cursor"));
  const std::string next = page["nextCursor"];
  std::vector<std::string> seen;
  std::string before = page["previousCursor"];
  while (!before.empty()) {
    json earlier = Get(base + "?task=workerpool0-0&tail=10&before=" + before).json();
    for (auto it = earlier["entries"].rbegin(); it != earlier["entries"].rend(); ++it) {
      seen.push_back((*it)["message"]);
    }
    before = earlier.value("previousCursor", "");
  }
  ASSERT_EQ(seen.size(), 15u);
  EXPECT_EQ(seen.front(), "line 14");
  EXPECT_EQ(seen.back(), "line 0");

  Append(uid, "workerpool0-0", "after the tail");
  json more = Get(base + "?task=workerpool0-0&cursor=" + next).json();
  ASSERT_EQ(more["entries"].size(), 1u) << more.dump();
  EXPECT_EQ(more["entries"][0]["message"], "after the tail");

  EXPECT_EQ(Get(base + "?tail=0").status, 400);
  EXPECT_EQ(Get(base + "?tail=10001").status, 400);
  EXPECT_EQ(Get(base + "?tail=5&follow=true").status, 400);
  EXPECT_EQ(Get(base + "?tail=5&before=nope").status, 400);
}

TEST_F(ApiLogsTest, MlLogsAndErrors) {
  CreateMl("logged");
  Append(UidOf(MlRef("logged")), "master-replica-0", "ml line");
  Reply r = Get(std::string(kMl) + "/logged/logs?task=master-replica-0");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["entries"][0]["taskName"], "master-replica-0");
  EXPECT_EQ(Get(std::string(kMl) + "/missing/logs").status, 404);
  EXPECT_EQ(Get(std::string(kMl) + "/logged/logs?follow=maybe").status, 400);
  EXPECT_EQ(Get(std::string(kMl) + "/logged/logs?cursor=garbage%21").status, 400);
}

TEST_F(ApiLogsTest, FollowStreamsUntilTheJobEnds) {
  std::string id = CreateVertex("follow");
  std::string uid = UidOf(VertexRef(id));
  Append(uid, "workerpool0-0", "line 0");

  std::mutex mu;
  std::condition_variable cv;
  std::string received;
  Reply reply;
  std::thread client([&] {
    reply = Send("GET", std::string(kVertex) + "/" + id + "/logs?follow=true&task=workerpool0-0",
                 std::nullopt, {}, [&](const std::string& piece) {
                   std::lock_guard<std::mutex> lock(mu);
                   received += piece;
                   cv.notify_all();
                   return true;
                 });
  });
  auto wait_for_lines = [&](size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(5), [&] {
      return static_cast<size_t>(std::count(received.begin(), received.end(), '\n')) >= n;
    });
  };
  EXPECT_TRUE(wait_for_lines(1));
  // Lines appended while following arrive without a new request.
  Append(uid, "workerpool0-0", "line 1");
  Append(uid, "workerpool0-0", "line 2");
  EXPECT_TRUE(wait_for_lines(3));
  FinishJob(VertexRef(id), 1);
  client.join();

  EXPECT_EQ(reply.status, 200) << reply.curl_error;
  EXPECT_TRUE(reply.curl_error.empty()) << reply.curl_error;
  EXPECT_EQ(reply.content_type, "application/x-ndjson; charset=UTF-8");
  std::vector<json> lines = Lines(reply.body);
  ASSERT_GE(lines.size(), 3u) << reply.body;
  EXPECT_EQ(lines[0]["message"], "line 0");
  EXPECT_EQ(lines[1]["message"], "line 1");
  EXPECT_EQ(lines[2]["message"], "line 2");
  for (const json& line : lines) EXPECT_TRUE(line.contains("cursor")) << line.dump();

  // Resuming from the cursor of line 1 gives exactly what followed it.
  Reply resumed =
      Get(std::string(kVertex) + "/" + id +
          "/logs?follow=true&task=workerpool0-0&cursor=" + lines[1]["cursor"].get<std::string>());
  ASSERT_EQ(resumed.status, 200) << resumed.body;
  std::vector<json> after = Lines(resumed.body);
  ASSERT_EQ(after.size(), lines.size() - 2) << resumed.body;
  EXPECT_EQ(after[0]["message"], "line 2");
  EXPECT_EQ(after.back()["cursor"], lines.back()["cursor"]);
}

TEST_F(ApiLogsTest, FollowOfAFinishedJobEndsAtOnceAndHonoursTask) {
  CreateMl("finished");
  std::string uid = UidOf(MlRef("finished"));
  Append(uid, "master-replica-0", "a");
  Append(uid, "worker-replica-0", "b");
  Append(uid, "master-replica-0", "c");
  FinishJob(MlRef("finished"), 0);
  Reply r = Get(std::string(kMl) + "/finished/logs?follow=true&task=master-replica-0");
  ASSERT_EQ(r.status, 200) << r.body;
  std::vector<json> lines = Lines(r.body);
  std::vector<std::string> messages;
  for (const json& line : lines) {
    if (line["taskName"] == "master-replica-0") messages.push_back(line["message"]);
    EXPECT_EQ(line["taskName"], "master-replica-0") << line.dump();
  }
  ASSERT_GE(messages.size(), 2u);
  EXPECT_EQ(messages[0], "a");
  EXPECT_EQ(messages[1], "c");
}

TEST_F(ApiLogsTest, FollowClientDisconnectDoesNotWedgeTheServer) {
  std::string id = CreateVertex("quiet");
  std::atomic<int> pieces{0};
  // Abort the transfer on the first data (the chunked header may arrive with it).
  Append(UidOf(VertexRef(id)), "workerpool0-0", "only line");
  Reply r = Send("GET", std::string(kVertex) + "/" + id + "/logs?follow=true", std::nullopt, {},
                 [&](const std::string&) {
                   ++pieces;
                   return false;
                 });
  EXPECT_FALSE(r.curl_error.empty());
  EXPECT_GE(pieces.load(), 1);
  // Several quiet streams abandoned by their clients, then normal traffic.
  for (int i = 0; i < 2; ++i) {
    Send("GET", std::string(kVertex) + "/" + id + "/logs?follow=true&task=none", std::nullopt, {},
         nullptr, /*timeout_s=*/1);
  }
  EXPECT_EQ(Get("/healthz").status, 200);
  EXPECT_EQ(Get(std::string(kVertex) + "/" + id).status, 200);
}

}  // namespace
}  // namespace ty::api
