// cpp-allreduce: the smallest possible data-parallel "trainer". Every replica of
// worker pools 0 and 1 makes a local gradient, and they average it over TCP using the
// addresses the training service puts in CLUSTER_SPEC (Vertex AI / Trainyard):
//   - the primary (workerpool0-0) listens on the port of its own CLUSTER_SPEC address
//     (2222) and accepts one connection per worker;
//   - every worker connects to the primary (retrying until it is up and its name
//     resolves), sends "RANK v0 v1 ...\n", receives the average, prints it and
//     answers "ack\n";
//   - the primary prints the average and exits 0 only after every worker acked, so
//     that no replica is stopped before it has printed.
// Replicas of other pools (parameter servers, evaluators) take no part and exit 0.
// Standard library + POSIX sockets only: g++ -std=c++17 -O2 -static -o allreduce allreduce.cc
// (ld warns that a static getaddrinfo needs glibc's shared NSS libraries at run time:
// since glibc 2.34 the "files" and "dns" lookups are built in, so names resolve in an
// image without any libc, such as the busybox one.)
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

// --- a tiny JSON reader: enough for CLUSTER_SPEC (objects, arrays, strings, numbers) ---
struct Json {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  double number = 0;
  std::string str;
  std::vector<Json> items;
  std::map<std::string, Json> fields;
  const Json& operator[](const std::string& k) const {
    static const Json none;
    auto it = fields.find(k);
    return it == fields.end() ? none : it->second;
  }
};

struct Parser {
  const std::string& s;
  size_t i = 0;
  void Ws() {
    while (i < s.size() && std::strchr(" \t\r\n", s[i])) ++i;
  }
  [[noreturn]] void Fail() {
    std::fprintf(stderr, "bad JSON at offset %zu\n", i);
    std::exit(2);
  }
  std::string Str() {
    std::string out;
    if (s[i++] != '"') Fail();
    while (i < s.size() && s[i] != '"') {
      char c = s[i++];
      if (c == '\\' && i < s.size()) {
        char e = s[i++];
        if (e == 'u') {
          out += '?';
          i += 4;
          continue;
        }  // Not needed for host names.
        c = e == 'n'   ? '\n'
            : e == 't' ? '\t'
            : e == 'r' ? '\r'
            : e == 'b' ? '\b'
            : e == 'f' ? '\f'
                       : e;
      }
      out += c;
    }
    ++i;
    return out;
  }
  Json Value() {
    Ws();
    Json v;
    if (i >= s.size()) Fail();
    char c = s[i];
    if (c == '{') {
      v.kind = Json::kObject;
      ++i, Ws();
      if (s[i] == '}') {
        ++i;
        return v;
      }
      for (;;) {
        Ws();
        std::string k = Str();
        Ws();
        if (s[i++] != ':') Fail();
        v.fields[k] = Value();
        Ws();
        if (s[i] == ',') {
          ++i;
          continue;
        }
        if (s[i++] != '}') Fail();
        return v;
      }
    }
    if (c == '[') {
      v.kind = Json::kArray;
      ++i, Ws();
      if (s[i] == ']') {
        ++i;
        return v;
      }
      for (;;) {
        v.items.push_back(Value());
        Ws();
        if (s[i] == ',') {
          ++i;
          continue;
        }
        if (s[i++] != ']') Fail();
        return v;
      }
    }
    if (c == '"') {
      v.kind = Json::kString;
      v.str = Str();
      return v;
    }
    if (!s.compare(i, 4, "true")) {
      i += 4;
      v.kind = Json::kBool;
      v.number = 1;
      return v;
    }
    if (!s.compare(i, 5, "false")) {
      i += 5;
      v.kind = Json::kBool;
      return v;
    }
    if (!s.compare(i, 4, "null")) {
      i += 4;
      return v;
    }
    char* end = nullptr;
    v.number = std::strtod(s.c_str() + i, &end);
    if (end == s.c_str() + i) Fail();
    v.kind = Json::kNumber;
    i = end - s.c_str();
    return v;
  }
};

// --- sockets ---
bool SendAll(int fd, const std::string& data) {
  for (size_t off = 0; off < data.size();) {
    ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}
bool RecvLine(int fd, std::string* line) {
  line->clear();
  char c;
  while (recv(fd, &c, 1, 0) == 1) {
    if (c == '\n') return true;
    *line += c;
  }
  return false;
}
void SplitHostPort(const std::string& addr, std::string* host, std::string* port) {
  size_t colon = addr.rfind(':');
  *host = colon == std::string::npos ? addr : addr.substr(0, colon);
  *port = colon == std::string::npos ? "2222" : addr.substr(colon + 1);
}
std::string Format(const std::vector<double>& v) {
  std::ostringstream out;
  out.precision(6);
  out << std::fixed;
  for (size_t k = 0; k < v.size(); ++k) out << (k ? " " : "") << v[k];
  return out.str();
}
[[noreturn]] void Die(const char* what) {
  std::perror(what);
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);  // Line by line into the job's logs.
  // Peers' names appear in the network's DNS as their containers start, and podman's
  // DNS server may not answer for a moment meanwhile: short resolver timeouts (instead
  // of glibc's 5 s x 2 attempts per server and query) keep the retry loop responsive.
  setenv("RES_OPTIONS", "timeout:1 attempts:1", /*overwrite=*/0);
  size_t dim = 4;
  int timeout_s = 300;
  for (int a = 1; a + 1 < argc; ++a) {
    if (!std::strcmp(argv[a], "--dim"))
      dim = std::strtoul(argv[++a], nullptr, 10);
    else if (!std::strcmp(argv[a], "--timeout"))
      timeout_s = std::atoi(argv[++a]);
  }
  const char* raw = std::getenv("CLUSTER_SPEC");
  if (!raw) {
    std::fprintf(stderr, "CLUSTER_SPEC is not set\n");
    return 2;
  }
  std::string text = raw;
  Json spec = Parser{text}.Value();
  const Json& cluster = spec["cluster"];
  std::string type = spec["task"]["type"].str;
  int index = static_cast<int>(spec["task"]["index"].number);
  std::vector<std::string> members;  // Rank order: workerpool0, then workerpool1.
  for (const char* pool : {"workerpool0", "workerpool1"})
    for (const Json& a : cluster[pool].items) members.push_back(a.str);
  if (type != "workerpool0" && type != "workerpool1") {
    std::printf("%s-%d: not a worker pool 0/1 replica; nothing to do\n", type.c_str(), index);
    return 0;
  }
  if (members.empty()) {
    std::fprintf(stderr, "CLUSTER_SPEC has no workerpool0\n");
    return 2;
  }
  int rank = type == "workerpool0" ? 0 : 1 + index;
  int world = static_cast<int>(members.size());
  std::vector<double> grad(dim);
  for (size_t k = 0; k < dim; ++k) grad[k] = (rank + 1) * (k + 1.0);  // Deterministic "gradient".
  std::printf("rank %d of %d (%s-%d): local gradient: %s\n", rank, world, type.c_str(), index,
              Format(grad).c_str());
  std::fflush(stdout);
  std::string host, port;
  SplitHostPort(members[0], &host, &port);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);

  if (rank == 0) {
    int srv = socket(AF_INET6, SOCK_STREAM, 0);
    if (srv < 0) Die("socket");
    int one = 1, zero = 0;
    setsockopt(srv, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(srv, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // Accept IPv4 too.
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET6;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    if (getaddrinfo(nullptr, port.c_str(), &hints, &res) != 0) Die("getaddrinfo");
    if (bind(srv, res->ai_addr, res->ai_addrlen) < 0) Die("bind");
    freeaddrinfo(res);
    if (listen(srv, 64) < 0) Die("listen");
    timeval tv{timeout_s, 0};
    setsockopt(srv, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);  // Bounds accept().
    std::printf("primary listening on port %s for %d workers\n", port.c_str(), world - 1);
    std::fflush(stdout);
    std::vector<double> sum = grad;
    std::vector<int> peers;
    while (static_cast<int>(peers.size()) < world - 1) {
      int fd = accept(srv, nullptr, nullptr);
      if (fd < 0) Die("accept (workers missing)");
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      std::string line;
      if (!RecvLine(fd, &line)) {
        close(fd);
        continue;
      }
      std::istringstream in(line);
      int peer_rank = -1;
      in >> peer_rank;
      for (size_t k = 0; k < dim; ++k) {
        double x = 0;
        in >> x;
        sum[k] += x;
      }
      std::printf("received gradient of rank %d\n", peer_rank);
      peers.push_back(fd);
    }
    for (double& x : sum) x /= world;
    std::ostringstream reply;
    reply.precision(17);
    for (double x : sum) reply << x << ' ';
    reply << '\n';
    for (int fd : peers) SendAll(fd, reply.str());
    for (int fd : peers) {  // Wait until every worker has printed before exiting.
      std::string ack;
      if (!RecvLine(fd, &ack) || ack != "ack") std::fprintf(stderr, "a worker did not ack\n");
      close(fd);
    }
    std::printf("averaged gradient: %s\n", Format(sum).c_str());
    return 0;
  }

  // Worker: connect to the primary, retrying until its name resolves and it listens.
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "cannot reach %s\n", members[0].c_str());
      return 1;
    }
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) == 0) {
      for (addrinfo* r = res; r && fd < 0; r = r->ai_next) {
        int s = socket(r->ai_family, r->ai_socktype, r->ai_protocol);
        if (s >= 0 && connect(s, r->ai_addr, r->ai_addrlen) == 0)
          fd = s;
        else if (s >= 0)
          close(s);
      }
      freeaddrinfo(res);
    }
    if (fd < 0) {
      if (attempt % 10 == 0) {
        std::printf("waiting for the primary %s\n", members[0].c_str());
        std::fflush(stdout);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  std::ostringstream msg;
  msg.precision(17);
  msg << rank;
  for (double x : grad) msg << ' ' << x;
  msg << '\n';
  std::string line;
  if (!SendAll(fd, msg.str()) || !RecvLine(fd, &line)) {
    std::fprintf(stderr, "primary hung up\n");
    return 1;
  }
  std::istringstream in(line);
  std::vector<double> avg(dim);
  for (double& x : avg) in >> x;
  std::printf("averaged gradient: %s\n", Format(avg).c_str());
  std::fflush(stdout);
  SendAll(fd, "ack\n");
  close(fd);
  return 0;
}
