// A real ApiServer on 127.0.0.1:<port 0> over a real JobService (MemoryJobStore,
// FakeExecutor, LogStore in a temp dir, SystemClock), and a small libcurl client.
#pragma once

#include <curl/curl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/api_server.h"
#include "fakes/fake_executor.h"
#include "gcs/object_store.h"
#include "jobstore/memory_job_store.h"
#include "logs/log_store.h"
#include "service/job_service.h"

namespace ty::api {

struct Reply {
  long status = 0;
  std::string content_type;
  std::string body;
  std::string curl_error;                      // Non-empty when the transfer itself failed.
  std::map<std::string, std::string> headers;  // Lower-case names.

  nlohmann::json json() const {
    return nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  }
};

class ApiFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("ty-api-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
    logs_ = std::move(logs::LogStore::Create((dir_ / "logs").string()).value());
    auto objects = gcs::ObjectStore::Open((dir_ / "buckets").string(), (dir_ / "storage").string(),
                                          SystemClock::Get());
    ASSERT_TRUE(objects.ok()) << objects.status().ToString();
    objects_ = std::move(objects).value();
    service::JobServiceOptions options;
    options.jobs.stop_grace = 1000000;
    options.random = [] { return SystemRandom::Get()->Next(); };
    // As the daemon wires it (daemon/main.cc): a job's buckets are its project's.
    options.claim_buckets = [this](const std::string& project, const std::vector<std::string>& b) {
      return objects_->ClaimBuckets(project, b);
    };
    auto service =
        service::JobService::Create(&store_, &executor_, logs_.get(), SystemClock::Get(), options);
    ASSERT_TRUE(service.ok()) << service.status().ToString();
    service_ = std::move(service).value();
    ASSERT_TRUE(service_->Start().ok());
    auto repositories = artifacts::Repositories::Open((dir_ / "artifact-repositories").string(),
                                                      SystemClock::Get());
    ASSERT_TRUE(repositories.ok()) << repositories.status().ToString();
    repositories_ = std::move(repositories).value();
    ApiServer::Options server_options;
    server_options.port = 0;
    server_options.storage = objects_.get();
    server_options.artifacts = repositories_.get();
    auto tensorboards = tensorboard::Store::Open(":memory:", SystemClock::Get());
    ASSERT_TRUE(tensorboards.ok()) << tensorboards.status().ToString();
    tensorboards_ = std::move(tensorboards).value();
    server_options.tensorboards = tensorboards_.get();
    server_options.random = SystemRandom::Get();
    ConfigureServer(&server_options);
    auto server = ApiServer::Create(service_.get(), server_options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    base_ = "http://127.0.0.1:" + std::to_string(*port);
  }

  // A test's chance to change the server's options (tokens, ...) before it starts.
  virtual void ConfigureServer(ApiServer::Options* /*options*/) {}

  void TearDown() override {
    if (server_) server_->Stop();
    server_.reset();
    if (service_) service_->Shutdown();
    service_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Sends one request. `body` nullopt = no body at all (and no content type).
  // `on_data`, when set, receives the body as it arrives; returning false aborts.
  Reply Send(const std::string& method, const std::string& path,
             std::optional<std::string> body = std::nullopt, std::vector<std::string> headers = {},
             std::function<bool(const std::string&)> on_data = nullptr, long timeout_s = 20) {
    struct Sink {
      Reply* reply;
      std::function<bool(const std::string&)>* on_data;
    };
    Reply reply;
    Sink sink{&reply, &on_data};
    CURL* curl = curl_easy_init();
    std::string url = base_ + path;
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, timeout_s);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    if (body) {
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
      bool typed = std::any_of(headers.begin(), headers.end(), [](const std::string& h) {
        return h.rfind("Content-Type:", 0) == 0;
      });
      if (!typed) headers.push_back("Content-Type: application/json");
    } else if (method == "POST") {
      // A POST with nothing: `content-length: 0` and no content type (googleapis).
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L);
      headers.push_back("Content-Type:");
    }
    curl_slist* list = nullptr;
    for (const std::string& h : headers) list = curl_slist_append(list, h.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(
        curl, CURLOPT_WRITEFUNCTION, +[](char* data, size_t size, size_t n, void* user) -> size_t {
          auto* s = static_cast<Sink*>(user);
          std::string piece(data, size * n);
          s->reply->body += piece;
          if (*s->on_data && !(*s->on_data)(piece)) return 0;
          return size * n;
        });
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &reply);
    curl_easy_setopt(
        curl, CURLOPT_HEADERFUNCTION, +[](char* data, size_t size, size_t n, void* user) -> size_t {
          std::string line(data, size * n);
          size_t colon = line.find(':');
          if (colon != std::string::npos) {
            std::string name = line.substr(0, colon);
            for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            std::string value = line.substr(colon + 1);
            while (!value.empty() && (value.front() == ' ')) value.erase(0, 1);
            while (!value.empty() && (value.back() == '\r' || value.back() == '\n'))
              value.pop_back();
            static_cast<Reply*>(user)->headers[name] = value;
          }
          return size * n;
        });
    CURLcode rc = curl_easy_perform(curl);
    if (rc != CURLE_OK) reply.curl_error = curl_easy_strerror(rc);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
    char* type = nullptr;
    curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &type);
    if (type) reply.content_type = type;
    curl_slist_free_all(list);
    curl_easy_cleanup(curl);
    return reply;
  }

  Reply Get(const std::string& path) { return Send("GET", path); }
  Reply Post(const std::string& path, const std::string& body) { return Send("POST", path, body); }
  Reply Delete(const std::string& path) { return Send("DELETE", path); }

  static std::string MlBody(const std::string& job_id,
                            const std::string& labels = R"({"team":"trainyard"})") {
    return R"({"jobId": ")" + job_id + R"(", "labels": )" + labels +
           R"(, "trainingInput": {"scaleTier": "CUSTOM", "region": "us-central1",
               "masterType": "n1-standard-4",
               "masterConfig": {"imageUri": "localhost/img:1"}}})";
  }
  static std::string VertexBody(const std::string& display_name) {
    return R"({"displayName": ")" + display_name + R"(", "jobSpec": {"workerPoolSpecs": [
      {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
       "containerSpec": {"imageUri": "localhost/img:1"}}]}})";
  }

  // A Vertex HyperparameterTuningJob: two trials of x in [0, 1], one at a time.
  static std::string HpBody(const std::string& display_name) {
    return nlohmann::json{
        {"displayName", display_name},
        {"studySpec",
         {{"metrics", {{{"metricId", "acc"}, {"goal", "MAXIMIZE"}}}},
          {"parameters",
           {{{"parameterId", "x"}, {"doubleValueSpec", {{"minValue", 0}, {"maxValue", 1}}}}}}}},
        {"maxTrialCount", 2},
        {"parallelTrialCount", 1},
        {"trialJobSpec",
         {{"workerPoolSpecs",
           {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
             {"replicaCount", "1"},
             {"containerSpec", {{"imageUri", "localhost/img:1"}}}}}}}}}
        .dump();
  }

  static constexpr char kMl[] = "/v1/projects/p/jobs";
  static constexpr char kVertex[] = "/v1/projects/p/locations/us-central1/customJobs";

  // Creates a Vertex job and returns its numeric id.
  std::string CreateVertex(const std::string& display_name) {
    Reply r = Post(kVertex, VertexBody(display_name));
    EXPECT_EQ(r.status, 200) << r.body;
    std::string name = r.json().value("name", "");
    return name.substr(name.rfind('/') + 1);
  }
  void CreateMl(const std::string& job_id) {
    Reply r = Post(kMl, MlBody(job_id));
    EXPECT_EQ(r.status, 200) << r.body;
  }

  std::string UidOf(const service::JobRef& ref) {
    auto job = service_->Get(ref);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->uid : "";
  }
  static service::JobRef VertexRef(const std::string& id) {
    return {model::Dialect::kVertex, "p", "us-central1", id};
  }
  static service::JobRef MlRef(const std::string& id) {
    return {model::Dialect::kMlV1, "p", "", id};
  }

  // Ends a job's only replica with `exit_code` and waits for a terminal state.
  // The service launches on a worker thread, so wait for the replica to run first.
  void FinishJob(const service::JobRef& ref, int exit_code) {
    std::string uid = UidOf(ref);
    for (int i = 0; i < 500 && !executor_.IsRunning(uid, 1, 0, 0); ++i) usleep(10000);
    executor_.Exit(uid, 1, 0, 0, exit_code);
    for (int i = 0; i < 500; ++i) {
      auto job = service_->Get(ref);
      if (job.ok() && model::IsTerminal(job->state)) return;
      usleep(10000);
    }
    ADD_FAILURE() << "job " << ref.id << " did not finish";
  }

  std::filesystem::path dir_;
  jobstore::MemoryJobStore store_;
  testing::FakeExecutor executor_;
  std::unique_ptr<logs::LogStore> logs_;
  std::unique_ptr<gcs::ObjectStore> objects_;              // Cloud Storage over dir_/buckets.
  std::unique_ptr<artifacts::Repositories> repositories_;  // Artifact Registry's.
  std::unique_ptr<tensorboard::Store> tensorboards_;       // Vertex AI TensorBoard's.
  std::unique_ptr<service::JobService> service_;
  std::unique_ptr<ApiServer> server_;
  std::string base_;
};

}  // namespace ty::api
