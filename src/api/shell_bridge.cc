// ShellBridge: a replica's terminal over a WebSocket (see shell_bridge.h).
#include "api/shell_bridge.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/write.hpp>
#include <cctype>
#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>

#include "api/http_status.h"

namespace ty::api::internal {

namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
namespace net = boost::asio;

namespace {

std::atomic<int> open_shells{0};

constexpr size_t kMaxBrowserMessage = 64 * 1024;

std::string ErrorText(const Status& s) { return ErrorResponse(s).body; }

}  // namespace

bool IsShellUpgrade(const HttpRequest& request, bool is_websocket_upgrade) {
  if (!is_websocket_upgrade || request.method != "GET") return false;
  std::string path = request.path;
  std::transform(path.begin(), path.end(), path.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return path.ends_with(":shell") || path.ends_with("%3ashell");
}

bool SameOrigin(const HttpRequest& request) {
  auto it = request.headers.find("origin");
  if (it == request.headers.end()) return true;  // Not a browser's: Origin guards browsers.
  const std::string& origin = it->second;
  const size_t scheme = origin.find("://");
  if (scheme == std::string::npos) return false;  // "null" (a sandboxed page, a file).
  const std::string authority = origin.substr(scheme + 3);
  return !authority.empty() && beast::iequals(authority, request.Header("host"));
}

template <class Stream>
ShellBridge<Stream>::ShellBridge(Stream stream,
                                 beast::http::request<beast::http::string_body> upgrade,
                                 HttpRequest head, const Router* router)
    : ws_(std::move(stream)),
      upgrade_(std::move(upgrade)),
      head_(std::move(head)),
      router_(router) {}

template <class Stream>
ShellBridge<Stream>::~ShellBridge() {
  if (counted_) open_shells.fetch_sub(1);
}

template <class Stream>
void ShellBridge<Stream>::Run() {
  // The WebSocket keeps its own time from here: the HTTP read deadline is off, a quiet
  // peer is pinged, and one that stops answering is cut.
  beast::get_lowest_layer(ws_).expires_never();
  websocket::stream_base::timeout timeouts;
  timeouts.handshake_timeout = std::chrono::seconds(30);
  timeouts.idle_timeout = std::chrono::seconds(60);
  timeouts.keep_alive_pings = true;
  ws_.set_option(timeouts);
  ws_.read_message_max(kMaxBrowserMessage);
  ws_.async_accept(upgrade_,
                   [self = this->shared_from_this()](error_code ec) { self->OnAccept(ec); });
}

template <class Stream>
void ShellBridge<Stream>::OnAccept(error_code ec) {
  if (ec) return CloseNow();
  ws_.async_read(
      in_, [self = this->shared_from_this()](error_code ec, std::size_t) { self->OnHello(ec); });
}

template <class Stream>
void ShellBridge<Stream>::OnHello(error_code ec) {
  if (ec) return CloseNow();
  const nlohmann::json hello =
      nlohmann::json::parse(beast::buffers_to_string(in_.data()), nullptr, false);
  in_.consume(in_.size());
  if (!ws_.got_text() || !hello.is_object()) {
    return SayAndClose(
        ErrorText(InvalidArgument("The first message is the hello: {\"token\": \"...\"} or {}.")),
        websocket::close_code::policy_error);
  }
  auto token = hello.find("token");
  Open(token != hello.end() && token->is_string() ? token->get<std::string>() : "");
}

template <class Stream>
void ShellBridge<Stream>::Open(const std::string& token) {
  if (open_shells.fetch_add(1) >= kMaxShells) {
    open_shells.fetch_sub(1);
    return SayAndClose(ErrorText(ResourceExhausted("The daemon has " + std::to_string(kMaxShells) +
                                                   " shells open; try again later.")),
                       websocket::close_code::try_again_later);
  }
  counted_ = true;
  HttpRequest request = head_;
  if (!token.empty()) request.headers["authorization"] = "Bearer " + token;
  Dispatch answer = router_->Handle(request);
  if (!answer.shell) {
    return SayAndClose(std::move(answer.response.body), websocket::close_code::policy_error);
  }
  shell_ = std::move(answer.shell);
  const int fd = ::dup(shell_->fd());
  if (fd < 0) {
    return SayAndClose(ErrorText(Internal("cannot hold the terminal")),
                       websocket::close_code::internal_error);
  }
  terminal_ = std::make_unique<net::posix::stream_descriptor>(ws_.get_executor(), fd);
  ReadBrowser();
  say_ = shell_->TakeEarlyOutput();
  if (say_.empty()) return ReadTerminal();
  ws_.binary(true);
  ws_.async_write(net::buffer(say_), [self = this->shared_from_this()](error_code ec, std::size_t) {
    if (ec) return self->CloseNow();
    self->ReadTerminal();
  });
}

template <class Stream>
void ShellBridge<Stream>::ReadTerminal() {
  terminal_->async_read_some(
      net::buffer(out_),
      [self = this->shared_from_this()](error_code ec, std::size_t n) { self->OnTerminal(ec, n); });
}

template <class Stream>
void ShellBridge<Stream>::OnTerminal(error_code ec, std::size_t n) {
  if (ec) {
    if (closing_) return;
    return SayAndClose(R"({"closed":"The shell ended (it exited, or its replica did)."})",
                       websocket::close_code::normal);
  }
  ws_.binary(true);
  ws_.async_write(net::buffer(out_, n),
                  [self = this->shared_from_this()](error_code ec, std::size_t) {
                    if (ec) return self->CloseNow();
                    self->ReadTerminal();
                  });
}

template <class Stream>
void ShellBridge<Stream>::ReadBrowser() {
  in_.consume(in_.size());
  ws_.async_read(
      in_, [self = this->shared_from_this()](error_code ec, std::size_t) { self->OnBrowser(ec); });
}

template <class Stream>
void ShellBridge<Stream>::OnBrowser(error_code ec) {
  if (ec) return CloseNow();  // The browser closed, or went quiet past the pings.
  if (ws_.got_text()) {
    Control(beast::buffers_to_string(in_.data()));
    return ReadBrowser();
  }
  net::async_write(*terminal_, in_.data(),
                   [self = this->shared_from_this()](error_code ec, std::size_t) {
                     if (ec) return self->CloseNow();
                     self->ReadBrowser();
                   });
}

template <class Stream>
void ShellBridge<Stream>::Control(const std::string& text) {
  const nlohmann::json message = nlohmann::json::parse(text, nullptr, false);
  if (!message.is_object()) return;
  auto resize = message.find("resize");
  if (resize == message.end() || !resize->is_object()) return;
  auto number = [&](const char* key) {
    auto it = resize->find(key);
    return it != resize->end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  };
  const int rows = static_cast<int>(std::clamp<int64_t>(number("rows"), 0, 1 << 20));
  const int cols = static_cast<int>(std::clamp<int64_t>(number("cols"), 0, 1 << 20));
  // A size out of bounds is refused by the shell; the terminal keeps its size.
  (void)shell_->Resize(rows, cols);
}

template <class Stream>
void ShellBridge<Stream>::SayAndClose(std::string text, websocket::close_code code) {
  if (closing_) return;
  closing_ = true;
  say_ = std::move(text);
  ws_.text(true);
  ws_.async_write(net::buffer(say_),
                  [self = this->shared_from_this(), code](error_code ec, std::size_t) {
                    if (ec) return self->CloseNow();
                    self->ws_.async_close(code, [self](error_code) { self->CloseNow(); });
                  });
}

template <class Stream>
void ShellBridge<Stream>::CloseNow() {
  error_code ignored;
  if (terminal_) terminal_->close(ignored);
  beast::get_lowest_layer(ws_).socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  beast::get_lowest_layer(ws_).socket().close(ignored);
}

template class ShellBridge<PlainStream>;
template class ShellBridge<TlsStream>;

}  // namespace ty::api::internal
