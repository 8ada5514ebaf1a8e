// HTTP routing end to end: a request made of the input (request line, header lines,
// a blank line, the body) through the whole router — both job dialects, tuning jobs,
// Logging, Storage (its upload protocols, sessions and the bucket URL that may write each,
// ranges, copies, buckets given to a project), page tokens and
// filters, access tokens and roles — over a real service on a fake executor. Never a
// crash, a sanitizer report or an escaped exception; every answer is a status from 100
// to 599, and a JSON answer parses. Each 2,000 inputs the world starts again, so jobs
// and objects the inputs made do not pile up.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "api/handlers.h"
#include "api/query.h"
#include "auth/tokens.h"
#include "fakes/fake_executor.h"
#include "fuzz/fuzz_input.h"
#include "gcs/object_store.h"
#include "jobstore/memory_job_store.h"
#include "logs/log_store.h"
#include "service/job_service.h"

namespace {

using nlohmann::json;

// Tokens the corpus carries (an admin, an editor of project p, a viewer of p).
json Tokens() {
  json t = json::array();
  for (auto [name, role, project] :
       {std::tuple{"root", "admin", "*"}, std::tuple{"ed", "editor", "p"},
        std::tuple{"vi", "viewer", "p"}}) {
    t.push_back({{"name", name},
                 {"sha256", ty::auth::Sha256Hex(std::string("ty_") + name)},
                 {"role", role},
                 {"projects", {project}}});
  }
  return t;
}

struct World {
  World() {
    dir = std::filesystem::temp_directory_path() / ("ty-fuzz-http-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    logs = std::move(ty::logs::LogStore::Create((dir / "logs").string()).value());
    ty::service::JobServiceOptions options;
    options.jobs.stop_grace = 1000;
    options.random = [] { return ty::SystemRandom::Get()->Next(); };
    service = std::move(ty::service::JobService::Create(&store, &executor, logs.get(),
                                                        ty::SystemClock::Get(), options)
                            .value());
    if (!service->Start().ok()) __builtin_trap();
    objects =
        std::move(ty::gcs::ObjectStore::Open((dir / "buckets").string(), (dir / "storage").string(),
                                             ty::SystemClock::Get())
                      .value());
    if (!objects->CreateBucket("bkt", "p").ok()) __builtin_trap();
    // Another project's bucket and one of no project (admins only until assigned).
    if (!objects->CreateBucket("obkt", "q").ok()) __builtin_trap();
    if (!objects->CreateBucket("loose-bkt").ok()) __builtin_trap();
    tokens = std::move(ty::auth::TokenTable::FromConfig(Tokens()).value());
    router =
        std::make_unique<ty::api::Router>(service.get(), objects.get(), ty::SystemRandom::Get(),
                                          false, ty::api::AccessGate{&tokens, {}});
  }
  ~World() {
    router.reset();
    service->Shutdown();
    service.reset();
    std::filesystem::remove_all(dir);
  }

  std::filesystem::path dir;
  ty::jobstore::MemoryJobStore store;
  ty::testing::FakeExecutor executor;
  std::unique_ptr<ty::logs::LogStore> logs;
  std::unique_ptr<ty::service::JobService> service;
  std::unique_ptr<ty::gcs::ObjectStore> objects;
  ty::auth::TokenTable tokens;
  std::unique_ptr<ty::api::Router> router;
};

// "METHOD TARGET\nName: value\n...\n\nBODY" -> a request; false when there is no
// request line.
bool ParseRequest(std::string_view text, ty::api::HttpRequest* r) {
  size_t eol = text.find('\n');
  std::string_view line = text.substr(0, eol);
  size_t space = line.find(' ');
  if (space == std::string_view::npos || space == 0) return false;
  r->method = std::string(line.substr(0, space));
  std::string target(line.substr(space + 1));
  size_t question = target.find('?');
  r->path = target.substr(0, question);
  if (question != std::string::npos) {
    r->raw_query = target.substr(question + 1);
    r->query = ty::api::ParseQuery(r->raw_query);
  }
  r->peer = "127.0.0.1";
  std::string_view rest = eol == std::string_view::npos ? "" : text.substr(eol + 1);
  while (!rest.empty()) {
    eol = rest.find('\n');
    std::string_view header = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? "" : rest.substr(eol + 1);
    if (header.empty()) break;
    size_t colon = header.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name(header.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view value = header.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    r->headers[name] = std::string(value);
  }
  r->body = std::string(rest);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::unique_ptr<World> world;
  static int inputs = 0;
  if (!world || ++inputs % 2000 == 0) {
    world.reset();
    world = std::make_unique<World>();
  }
  ty::api::HttpRequest request;
  if (!ParseRequest(ty::fuzz::Text(data, size), &request)) return 0;
  // As the session does: an upload's body goes to a staging file first.
  if (std::optional<std::string> spool = world->router->SpoolFileFor(request)) {
    std::ofstream(*spool, std::ios::binary) << request.body;
    request.body_file = *spool;
    request.body.clear();
  }
  ty::api::Dispatch d = world->router->Handle(request);
  if (!request.body_file.empty()) std::filesystem::remove(request.body_file);
  if (d.follow) {
    for (int i = 0; i < 3 && !d.follow->done; ++i) (void)world->router->NextChunk(&*d.follow);
    return 0;
  }
  const ty::api::HttpResponse& r = d.response;
  if (r.status < 100 || r.status > 599) __builtin_trap();
  if (!r.source && !r.body.empty() && r.content_type == ty::api::kJsonContentType &&
      json::parse(r.body, nullptr, false).is_discarded()) {
    __builtin_trap();
  }
  return 0;
}
