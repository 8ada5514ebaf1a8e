// EngineApiClient's terminals: an exec with a TTY, attached over a connection of its
// own that the engine upgrades to a raw byte stream (Docker's `Upgrade: tcp`, which
// podman serves too), so the bytes can be pumped by whoever holds the descriptor.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/files.h"
#include "common/unique_fd.h"
#include "executor/container/engine_api_client.h"
#include "executor/container/engine_json.h"

namespace ty::executor {
namespace {

// The header of the upgrade's answer is small; an engine that says more is not one.
constexpr size_t kMaxUpgradeHeaderBytes = 16 * 1024;
constexpr int kUpgradeTimeoutS = 10;

void SetReceiveTimeout(int fd, int seconds) {
  timeval tv{seconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

Result<int> ConnectUnix(const std::string& path) {
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) return InvalidArgument("engine socket path too long");
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return Internal(std::string("socket: ") + std::strerror(errno));
  SetReceiveTimeout(fd.get(), kUpgradeTimeoutS);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return Unavailable("container engine at " + path + ": " + std::strerror(errno));
  }
  return fd.release();
}

Status WriteAll(int fd, const std::string& bytes) {
  size_t at = 0;
  while (at < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Unavailable(std::string("container engine: write: ") + std::strerror(errno));
    at += static_cast<size_t>(n);
  }
  return Status::Ok();
}

// Reads until the end of the answer's header; `*rest` gets the bytes after it.
Result<std::string> ReadHeader(int fd, std::string* rest) {
  std::string got;
  char buffer[4096];
  for (;;) {
    const size_t end = got.find("\r\n\r\n");
    if (end != std::string::npos) {
      *rest = got.substr(end + 4);
      return got.substr(0, end);
    }
    if (got.size() > kMaxUpgradeHeaderBytes) return Internal("container engine: header too long");
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Unavailable("container engine closed the exec's connection");
    got.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

Result<TerminalExec> EngineApiClient::StartTerminal(const std::string& id,
                                                    const std::vector<std::string>& cmd,
                                                    const std::vector<std::string>& env) {
  const std::string body = nlohmann::json{
      {"AttachStdin", true}, {"AttachStdout", true}, {"AttachStderr", true},
      {"Tty", true},         {"Privileged", false},  {"Cmd", cmd},
      {"Env", env}}.dump();
  ASSIGN_OR_RETURN(Response r, Call("POST", "/containers/" + UrlEncode(id) + "/exec", &body,
                                    request_timeout_ms_, nullptr, nullptr));
  if (r.status == 409) return FailedPrecondition("the replica's container is not running");
  if (r.status != 201 && r.status != 200) return ErrorFrom(r, "exec in container " + id);
  ASSIGN_OR_RETURN(nlohmann::json created, internal::ParseJson(r.body, "exec create"));
  const std::string exec_id = internal::StringField(created, "Id");
  if (exec_id.empty()) return Internal("exec create: the engine named no exec");
  ASSIGN_OR_RETURN(TerminalExec exec, AttachTerminal(exec_id));
  // The host pid lets the shell be ended for sure: the engine has no call to end an
  // exec, and one whose connection closes runs on.
  Result<Response> inspect = Call("GET", "/exec/" + UrlEncode(exec_id) + "/json", nullptr,
                                  request_timeout_ms_, nullptr, nullptr);
  if (inspect.ok() && inspect->status == 200) {
    Result<nlohmann::json> state = internal::ParseJson(inspect->body, "exec inspect");
    if (state.ok()) exec.pid = internal::IntField(*state, "Pid");
  }
  return exec;
}

Result<TerminalExec> EngineApiClient::AttachTerminal(const std::string& exec_id) {
  ASSIGN_OR_RETURN(int raw_fd, ConnectUnix(socket_path_));
  UniqueFd fd(raw_fd);
  const std::string body = R"({"Detach":false,"Tty":true})";
  const std::string request = "POST " + std::string(internal::kApiPrefix) + "/exec/" +
                              UrlEncode(exec_id) +
                              "/start HTTP/1.1\r\nHost: engine\r\n"
                              "Content-Type: application/json\r\nConnection: Upgrade\r\n"
                              "Upgrade: tcp\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
  RETURN_IF_ERROR(WriteAll(fd.get(), request));
  TerminalExec exec;
  exec.id = exec_id;
  ASSIGN_OR_RETURN(std::string header, ReadHeader(fd.get(), &exec.early));
  // "HTTP/1.1 101 UPGRADED" from podman and Docker; an older Docker hijacks a 200.
  const size_t space = header.find(' ');
  const std::string code = space == std::string::npos ? "" : header.substr(space + 1, 3);
  if (code != "101" && code != "200") {
    return Internal("exec start: the engine answered " + header.substr(0, header.find('\r')));
  }
  SetReceiveTimeout(fd.get(), 0);  // From now on the stream is as quiet as the shell.
  exec.fd = fd.release();
  return exec;
}

Status EngineApiClient::ResizeTerminal(const std::string& exec_id, int rows, int cols) {
  ASSIGN_OR_RETURN(Response r, Call("POST",
                                    "/exec/" + UrlEncode(exec_id) + "/resize?h=" +
                                        std::to_string(rows) + "&w=" + std::to_string(cols),
                                    nullptr, request_timeout_ms_, nullptr, nullptr));
  if (r.status == 200 || r.status == 201 || r.status == 204) return Status::Ok();
  return ErrorFrom(r, "resize exec " + exec_id);
}

}  // namespace ty::executor
