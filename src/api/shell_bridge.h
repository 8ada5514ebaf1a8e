// Internal to api/ (includes Boost.Beast: include it only from api/*.cc).
//
// ShellBridge: one WebSocket carrying a replica's terminal (enableWebAccess). The
// HttpSession hands over its connection when a request asks to upgrade to a WebSocket
// on a `:shell` path (after refusing another origin's page: a browser sends any
// site's WebSocket to us with no way for us to tell but Origin). Then:
//
//   accept --> read the hello {"token": "..."} --> Router::Handle (the gate, the row's
//   editor role, the service: OpenShell) --> error: a text message with the Google
//   error JSON, then close (1008)
//                                     `--> shell: two pumps until either side ends
//      terminal --bytes--> binary messages        binary messages --bytes--> terminal
//      text messages {"resize":{"rows":R,"cols":C}} resize the terminal
//
// The token travels in the first message because a browser cannot put an
// Authorization header on a WebSocket; a client that can may send it there instead.
// When the shell ends (it exited, or the replica did) a text message
// {"closed": "..."} says so before the close. Closing the socket kills the shell.
//
// Limits: 64 KiB per message from the browser, 30 s to say hello, a ping when the
// peer is quiet and a close when it stops answering them, at most kMaxShells at once
// in the daemon. Thread-safety: every handler runs on the connection's strand.
#pragma once

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <memory>
#include <string>

#include "api/handlers.h"
#include "api/http_session.h"

namespace ty::api::internal {

// Whether `request` asks for a shell over a WebSocket (the path ends in ":shell").
bool IsShellUpgrade(const HttpRequest& request, bool is_websocket_upgrade);
// Whether a request's Origin (when it has one) is the daemon's own: its host and port
// are the request's Host. Browsers always send it on a WebSocket.
bool SameOrigin(const HttpRequest& request);

template <class Stream>
class ShellBridge : public std::enable_shared_from_this<ShellBridge<Stream>> {
 public:
  static constexpr int kMaxShells = 32;

  // `head`: the request as the router sees it; `upgrade`: the same, for the handshake.
  ShellBridge(Stream stream, boost::beast::http::request<boost::beast::http::string_body> upgrade,
              HttpRequest head, const Router* router);
  ~ShellBridge();
  void Run();

 private:
  using error_code = boost::beast::error_code;

  void OnAccept(error_code ec);
  void OnHello(error_code ec);
  // Fails with the router's answer, or starts both pumps.
  void Open(const std::string& token);
  void ReadTerminal();
  void OnTerminal(error_code ec, std::size_t n);
  void ReadBrowser();
  void OnBrowser(error_code ec);
  // A control message from the browser (text): a resize.
  void Control(const std::string& text);
  // A text message, then a close with `code`.
  void SayAndClose(std::string text, boost::beast::websocket::close_code code);
  void CloseNow();

  boost::beast::websocket::stream<Stream> ws_;
  boost::beast::http::request<boost::beast::http::string_body> upgrade_;
  HttpRequest head_;
  const Router* router_;
  std::shared_ptr<service::ReplicaShell> shell_;
  std::unique_ptr<boost::asio::posix::stream_descriptor> terminal_;
  boost::beast::flat_buffer in_;  // From the browser.
  char out_[16 * 1024];           // From the terminal.
  std::string say_;
  bool counted_ = false;  // Holds one of kMaxShells.
  bool closing_ = false;
};

extern template class ShellBridge<PlainStream>;
extern template class ShellBridge<TlsStream>;

}  // namespace ty::api::internal
