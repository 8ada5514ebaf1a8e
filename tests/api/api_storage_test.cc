// The Cloud Storage JSON API on the wire (docs/contracts/cloud-storage-v1.md): the exact
// request shapes gcloud, Python and Node send (§2, §3, §7), resources and hashes
// (§4), errors (§6), and names that try to leave the bucket. The real gcloud
// runs against it in tests/integration/gcloud_test.cc.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "api/api_fixture.h"
#include "common/files.h"

namespace ty::api {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class ApiStorageTest : public ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    ASSERT_EQ(Post("/storage/v1/b?project=p", R"({"name":"bkt"})").status, 200);
  }

  // gcloud's multipart body: single-quoted boundary, bare LF line ends (§2.2).
  Reply GcloudMultipart(const std::string& name, const std::string& bytes,
                        const std::string& query = "") {
    const std::string boundary = "===============6759495804720373358==";
    std::string body = "--" + boundary +
                       "\nContent-Type: application/json\nMIME-Version: 1.0\n\n"
                       "{\"bucket\": \"bkt\", \"contentType\": \"text/plain\", \"name\": \"" +
                       name + "\"}\n--" + boundary +
                       "\nContent-Type: text/plain\nMIME-Version: 1.0\n"
                       "Content-Transfer-Encoding: binary\n\n" +
                       bytes + "\n--" + boundary + "--";
    return Send("POST", "/upload/storage/v1/b/bkt/o?alt=json&uploadType=multipart" + query, body,
                {"Content-Type: multipart/related; boundary='" + boundary + "'"});
  }

  std::filesystem::path BucketDir() const { return dir_ / "buckets" / "bkt"; }
};

TEST_F(ApiStorageTest, MultipartUploadAsGcloudSendsItLandsInTheBucketDirectory) {
  Reply r = GcloudMultipart("dir/f.txt", "123456789");
  ASSERT_EQ(r.status, 200) << r.body;
  json o = r.json();
  EXPECT_EQ(o["kind"], "storage#object");
  EXPECT_EQ(o["name"], "dir/f.txt");
  EXPECT_EQ(o["size"], "9");
  EXPECT_EQ(o["md5Hash"], "JfnnlDI7RTiF9RgfG2JNCw==");
  EXPECT_EQ(o["crc32c"], "4waSgw==");
  EXPECT_EQ(o["contentType"], "text/plain");
  EXPECT_EQ(o["metageneration"], "1");
  EXPECT_TRUE(o["generation"].is_string());
  EXPECT_THAT(o["mediaLink"].get<std::string>(),
              HasSubstr("/download/storage/v1/b/bkt/o/dir%2Ff.txt?generation="));
  std::ifstream f(BucketDir() / "dir/f.txt");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(f)), {}), "123456789");
}

TEST_F(ApiStorageTest, PythonStyleMultipartWithCrlfAndNameInTheQuery) {
  std::string body =
      "--b1\r\ncontent-type: application/json; charset=UTF-8\r\n\r\n{\"size\":\"3\"}\r\n"
      "--b1\r\ncontent-type: application/x-tar\r\n\r\nabc\r\n--b1--\r\n";
  Reply r = Send("POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart&name=pkg%2Ft.tar.gz",
                 body, {"Content-Type: multipart/related; boundary=\"b1\""});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["name"], "pkg/t.tar.gz");
  EXPECT_EQ(r.json()["size"], "3");
  EXPECT_EQ(r.json()["contentType"], "application/x-tar");
}

TEST_F(ApiStorageTest, ResumableSessionWith308AndRangeThenFinalize) {
  Reply init = Send("POST", "/resumable/upload/storage/v1/b/bkt/o?alt=json&uploadType=resumable",
                    R"({"name": "big.bin", "contentType": "application/octet-stream"})",
                    {"X-Upload-Content-Length: 10"});
  ASSERT_EQ(init.status, 200) << init.body;
  std::string location = init.headers["location"];
  ASSERT_THAT(location, HasSubstr("/upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id="));
  std::string session = location.substr(location.find("/upload/"));
  Reply part = Send("PUT", session, "01234", {"Content-Range: bytes 0-4/10", "Content-Type:"});
  EXPECT_EQ(part.status, 308);
  EXPECT_EQ(part.headers["range"], "bytes=0-4");
  Reply status = Send("PUT", session, "", {"Content-Range: bytes */*", "Content-Type:"});
  EXPECT_EQ(status.status, 308);
  EXPECT_EQ(status.headers["range"], "bytes=0-4");
  // A resend overlapping what is persisted is fine (a client that lost an answer).
  Reply rest = Send("PUT", session, "3456789", {"Content-Range: bytes 3-9/10", "Content-Type:"});
  ASSERT_EQ(rest.status, 200) << rest.body;
  EXPECT_EQ(rest.json()["size"], "10");
  EXPECT_EQ(Get("/storage/v1/b/bkt/o/big.bin?alt=media").body, "0123456789");
  Reply again = Send("PUT", session, "", {"Content-Range: bytes */10", "Content-Type:"});
  EXPECT_EQ(again.status, 200);  // The finished session answers with the object again.
  Reply gap = Send("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=g", "{}");
  std::string s2 = gap.headers["location"].substr(gap.headers["location"].find("/upload/"));
  EXPECT_EQ(Send("PUT", s2, "xx", {"Content-Range: bytes 5-6/7", "Content-Type:"}).status, 400);
  EXPECT_EQ(Send("PUT", "/upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id=nope", "x",
                 {"Content-Range: bytes 0-0/1", "Content-Type:"})
                .status,
            404);
}

// Python puts its checksum in the metadata part; bytes that differ are refused and
// nothing is stored.
TEST_F(ApiStorageTest, MultipartChecksumsFromTheClientAreVerified) {
  auto upload = [&](const std::string& checksum) {
    std::string body =
        "--b1\r\ncontent-type: application/json; charset=UTF-8\r\n\r\n"
        "{\"name\":\"checked.txt\"," +
        checksum + "}\r\n--b1\r\ncontent-type: text/plain\r\n\r\n123456789\r\n--b1--\r\n";
    return Send("POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart", body,
                {"Content-Type: multipart/related; boundary=\"b1\""});
  };
  Reply bad = upload("\"crc32c\":\"AAAAAA==\"");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_THAT(bad.json()["error"]["message"].get<std::string>(), HasSubstr("4waSgw=="));
  EXPECT_EQ(Get("/storage/v1/b/bkt/o/checked.txt").status, 404);
  EXPECT_EQ(upload("\"md5Hash\":\"1B2M2Y8AsgTpgAmY7PhCfg==\"").status, 400);
  Reply good = upload("\"crc32c\":\"4waSgw==\",\"md5Hash\":\"JfnnlDI7RTiF9RgfG2JNCw==\"");
  EXPECT_EQ(good.status, 200) << good.body;
}

// gcloud and Python build query strings with urlencode: a space is '+', a plus %2B.
TEST_F(ApiStorageTest, FormEncodedQueryValues) {
  Reply r = Send("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=my+file%2Bv2.txt", "x",
                 {"Content-Type: text/plain"});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["name"], "my file+v2.txt");
  json listed = Get("/storage/v1/b/bkt/o?prefix=my+file").json();
  ASSERT_EQ(listed["items"].size(), 1u);
}

TEST_F(ApiStorageTest, NodeStyleOpenEndedChunkFinalizes) {
  Reply init = Send("POST", "/upload/storage/v1/b/bkt/o?name=node.txt&uploadType=resumable", "{}");
  ASSERT_EQ(init.status, 200) << init.body;
  std::string session = init.headers["location"].substr(init.headers["location"].find("/upload/"));
  Reply done = Send("PUT", session, "hello node", {"Content-Range: bytes 0-*/*", "Content-Type:"});
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(done.json()["size"], "10");
  // Node's JSON routes carry no /storage/v1 prefix.
  Reply meta = Get("/b/bkt/o/node.txt");
  ASSERT_EQ(meta.status, 200) << meta.body;
  EXPECT_EQ(meta.json()["crc32c"], done.json()["crc32c"]);
}

TEST_F(ApiStorageTest, RangedDownloadsWithGoogleHeaders) {
  ASSERT_EQ(GcloudMultipart("r.txt", "0123456789").status, 200);
  json o = Get("/storage/v1/b/bkt/o/r.txt").json();
  std::string media = o["mediaLink"].get<std::string>();
  media = media.substr(media.find("/download/"));
  Reply part = Send("GET", media, std::nullopt, {"Range: bytes=2-5"});
  EXPECT_EQ(part.status, 206);
  EXPECT_EQ(part.body, "2345");
  EXPECT_EQ(part.headers["content-range"], "bytes 2-5/10");
  EXPECT_EQ(part.headers["content-length"], "4");
  EXPECT_EQ(part.headers["x-goog-hash"],
            "crc32c=" + o["crc32c"].get<std::string>() + ",md5=" + o["md5Hash"].get<std::string>());
  EXPECT_EQ(part.headers["x-goog-generation"], o["generation"]);
  EXPECT_EQ(part.headers["x-goog-stored-content-encoding"], "identity");
  EXPECT_EQ(Send("GET", media, std::nullopt, {"Range: bytes=-3"}).body, "789");
  EXPECT_EQ(Send("GET", media, std::nullopt, {"Range: bytes=20-"}).status, 416);
  Reply whole = Get("/bkt/r.txt");  // Path-style.
  EXPECT_EQ(whole.status, 200);
  EXPECT_EQ(whole.body, "0123456789");
  EXPECT_EQ(Get("/download/storage/v1/b/bkt/o/r.txt?alt=media&generation=1").status, 404);
}

// A streamed download leaves the connection open for the next request (clients
// pool connections; one closed under them fails with "socket hang up").
TEST_F(ApiStorageTest, ConnectionStaysOpenAfterAStreamedDownload) {
  ASSERT_EQ(GcloudMultipart("k.txt", "keep me").status, 200);
  CURL* curl = curl_easy_init();
  std::string body;
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(
      curl, CURLOPT_WRITEFUNCTION, +[](char* d, size_t s, size_t n, void* out) {
        static_cast<std::string*>(out)->append(d, s * n);
        return s * n;
      });
  long connects = -1;
  for (int i = 0; i < 2; ++i) {
    std::string url = base_ + "/storage/v1/b/bkt/o/k.txt?alt=media";
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    ASSERT_EQ(curl_easy_perform(curl), CURLE_OK);
    curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &connects);
  }
  curl_easy_cleanup(curl);
  EXPECT_EQ(body, "keep mekeep me");
  EXPECT_EQ(connects, 0);  // The second request reused the first connection.
}

TEST_F(ApiStorageTest, ListingWithPrefixesAndPages) {
  for (const char* n : {"a/1", "a/2", "b/1", "c"}) ASSERT_EQ(GcloudMultipart(n, n).status, 200);
  json top = Get("/storage/v1/b/bkt/o?delimiter=%2F&maxResults=1000").json();
  EXPECT_EQ(top["prefixes"], json::array({"a/", "b/"}));
  ASSERT_EQ(top["items"].size(), 1u);
  EXPECT_EQ(top["items"][0]["name"], "c");
  std::vector<std::string> names;
  std::string token;
  for (int i = 0; i < 10; ++i) {
    json page = Get("/storage/v1/b/bkt/o?maxResults=1" +
                    (token.empty() ? std::string() : "&pageToken=" + token))
                    .json();
    for (const json& item : page.value("items", json::array())) names.push_back(item["name"]);
    if (!page.contains("nextPageToken")) break;
    token = UrlEncode(page["nextPageToken"].get<std::string>());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a/1", "a/2", "b/1", "c"}));
  EXPECT_EQ(Get("/storage/v1/b/bkt/storageLayout").json()["kind"], "storage#storageLayout");
}

TEST_F(ApiStorageTest, PreconditionsPatchDeleteComposeRewrite) {
  ASSERT_EQ(GcloudMultipart("x", "first").status, 200);
  Reply clash = GcloudMultipart("x", "second", "&ifGenerationMatch=0");
  EXPECT_EQ(clash.status, 412);
  EXPECT_EQ(clash.json()["error"]["errors"][0]["reason"], "conditionNotMet");
  Reply patched = Send("PATCH", "/storage/v1/b/bkt/o/x",
                       R"({"metadata": {"goog-reserved-file-mtime": "1700000000"}})");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.json()["metageneration"], "2");
  EXPECT_EQ(patched.json()["metadata"]["goog-reserved-file-mtime"], "1700000000");
  ASSERT_EQ(GcloudMultipart("y", "-second").status, 200);
  Reply composed = Post("/storage/v1/b/bkt/o/xy/compose",
                        R"({"destination": {"contentType": "text/plain", "md5Hash": "bogus"},
                            "sourceObjects": [{"name": "x"}, {"name": "y"}]})");
  ASSERT_EQ(composed.status, 200) << composed.body;
  EXPECT_EQ(composed.json()["componentCount"], 2);
  EXPECT_EQ(Get("/storage/v1/b/bkt/o/xy?alt=media").body, "first-second");
  // Like Google's composites: a server-computed CRC-32C and no MD5.
  EXPECT_FALSE(composed.json().contains("md5Hash"));
  EXPECT_EQ(composed.json()["crc32c"], GcloudMultipart("flat", "first-second").json()["crc32c"]);
  Reply rewritten =
      Post("/storage/v1/b/bkt/o/xy/rewriteTo/b/bkt/o/copy%2Fxy?maxBytesRewrittenPerCall=1", "{}");
  ASSERT_EQ(rewritten.status, 200) << rewritten.body;
  EXPECT_EQ(rewritten.json()["done"], true);
  EXPECT_EQ(rewritten.json()["resource"]["crc32c"], composed.json()["crc32c"]);
  std::string gen = Get("/storage/v1/b/bkt/o/x").json()["generation"];
  EXPECT_EQ(Delete("/storage/v1/b/bkt/o/x?generation=1").status, 404);
  EXPECT_EQ(Delete("/storage/v1/b/bkt/o/x?generation=" + gen).status, 204);
  Reply missing = Get("/storage/v1/b/bkt/o/x");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.json()["error"]["message"], "No such object: bkt/x");
}

TEST_F(ApiStorageTest, NamesThatWouldLeaveTheBucketAre400sAndWriteNothing) {
  for (const char* bad : {"../escape", "a/../../escape", "/abs", "a//b"}) {
    Reply r = GcloudMultipart(bad, "x");
    EXPECT_EQ(r.status, 400) << bad << ": " << r.body;
  }
  Reply nul = Send("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=a%00b", "x",
                   {"Content-Type: text/plain"});
  EXPECT_EQ(nul.status, 400);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "buckets" / "escape"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "escape"));
  EXPECT_EQ(Send("POST", "/upload/storage/v1/b/..%2F..%2Ftmp/o?uploadType=media&name=x", "x",
                 {"Content-Type: text/plain"})
                .status,
            400);
  EXPECT_TRUE(std::filesystem::is_empty(dir_ / "storage" / "staging"));
  EXPECT_EQ(Get("/storage/v1/b/bkt/o/..%2F..%2Fetc%2Fpasswd?alt=media").status, 404);
}

TEST_F(ApiStorageTest, BucketsCreateListDelete) {
  Reply dup = Post("/storage/v1/b?project=p", R"({"name":"bkt"})");
  EXPECT_EQ(dup.status, 409);
  EXPECT_EQ(Post("/storage/v1/b?project=p", R"({"name":"Bad_Name!"})").status, 400);
  json list = Get("/storage/v1/b?project=p&maxResults=1000&projection=full").json();
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["storageClass"], "STANDARD");
  EXPECT_FALSE(list["items"][0].contains("retentionPolicy"));
  ASSERT_EQ(GcloudMultipart("keep", "x").status, 200);
  EXPECT_EQ(Delete("/storage/v1/b/bkt").status, 409);
  EXPECT_EQ(Get("/storage/v1/b/nosuch").status, 404);
}

// Found by a hostile replica (issue 19): after `mkfifo /gcs/bkt/fifo_obj`, two GETs of
// it blocked both I/O threads (open waited for a writer) and /healthz hung.
TEST_F(ApiStorageTest, AFifoInABucketIsNoObjectAndBlocksNothing) {
  const std::filesystem::path fifo = BucketDir() / "fifo_obj";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto get = [this](const std::string& path) {
    return std::async(std::launch::async, [this, path] { return Get(path).status; });
  };
  std::vector<std::future<long>> gets;
  for (int i = 0; i < 2; ++i) gets.push_back(get("/storage/v1/b/bkt/o/fifo_obj?alt=media"));
  gets.push_back(get("/storage/v1/b/bkt/o/fifo_obj"));
  gets.push_back(get("/healthz"));
  bool blocked = false;
  for (auto& g : gets) {
    blocked = blocked || g.wait_for(std::chrono::seconds(10)) != std::future_status::ready;
  }
  if (blocked) {  // Let the stuck reads go so the test ends, then fail.
    for (int i = 0; i < 3; ++i) {
      int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
      if (w >= 0) ::close(w);
    }
    FAIL() << "a GET of a FIFO blocked";
  }
  for (size_t i = 0; i + 1 < gets.size(); ++i) EXPECT_EQ(gets[i].get(), 404);
  EXPECT_EQ(gets.back().get(), 200);
  json list = Get("/storage/v1/b/bkt/o").json();
  EXPECT_FALSE(list.contains("items")) << list.dump();
}

// Found by a hostile replica (issue 19): metadata GETs of a 20 GB sparse file took 85 s
// each, hashing on the I/O thread, and /healthz failed meanwhile. A large file nobody
// hashed yet is answered at once without hashes; the hash queue fills them in.
TEST_F(ApiStorageTest, ALargeFileAReplicaWroteIsHashedOffTheRequestThread) {
  const std::filesystem::path big = BucketDir() / "big.bin";
  std::ofstream(big).close();
  std::filesystem::resize_file(big, 64ull << 20);  // Sparse: zeros, no disk.
  auto start = std::chrono::steady_clock::now();
  Reply first = Get("/storage/v1/b/bkt/o/big.bin");
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.json()["size"], std::to_string(64ull << 20));
  EXPECT_FALSE(first.json().contains("crc32c")) << "hashed on the request thread";
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  json hashed;
  for (int i = 0; i < 300 && !hashed.contains("md5Hash"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    hashed = Get("/storage/v1/b/bkt/o/big.bin").json();
  }
  // The MD5 of 64 MiB of zeros.
  EXPECT_EQ(hashed.value("md5Hash", ""), "f2FNqTKc066/WbkarcML8A==") << hashed.dump();
  EXPECT_TRUE(hashed.contains("crc32c"));
}

}  // namespace
}  // namespace ty::api
