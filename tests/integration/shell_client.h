// A WebSocket client of a replica's shell (api/shell_bridge.h), as the console's page
// is one: Boost.Beast, synchronous, every read bounded by a receive timeout so a test
// fails instead of hanging.
#pragma once

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <string>

namespace ty::testing {

class ShellClient {
 public:
  // Connects to 127.0.0.1:`port` and asks to upgrade `path`, with `origin` as the
  // browser's Origin ("" = none). false when the daemon refuses the upgrade.
  bool Open(int port, const std::string& path, const std::string& origin = "") {
    namespace net = boost::asio;
    boost::beast::error_code ec;
    ws_.next_layer().connect({net::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)}, ec);
    if (ec) return false;
    SetReadTimeout(10);
    ws_.set_option(boost::beast::websocket::stream_base::decorator(
        [origin](boost::beast::websocket::request_type& req) {
          if (!origin.empty()) req.set(boost::beast::http::field::origin, origin);
        }));
    ws_.handshake("127.0.0.1:" + std::to_string(port), path, ec);
    return !ec;
  }
  // The hello: the token, or none.
  void Hello(const std::string& token = "") {
    ws_.text(true);
    boost::beast::error_code ec;  // A refused socket shows in what the reads find.
    ws_.write(
        boost::asio::buffer(token.empty() ? std::string("{}") : "{\"token\":\"" + token + "\"}"),
        ec);
  }
  void Type(const std::string& keys) {
    ws_.binary(true);
    boost::beast::error_code ec;
    ws_.write(boost::asio::buffer(keys), ec);
  }
  void Say(const std::string& control) {
    ws_.text(true);
    boost::beast::error_code ec;
    ws_.write(boost::asio::buffer(control), ec);
  }
  // Reads until the terminal showed `wanted` (true), the daemon said something in text
  // (kept in said()), the socket closed or `timeout_s` passed.
  // A read that times out breaks the stream (Beast fails it), so one timeout ends all.
  bool WaitFor(const std::string& wanted, int timeout_s = 20) {
    SetReadTimeout(timeout_s);
    while (shown_.find(wanted) == std::string::npos) {
      if (!ReadOne()) break;
    }
    return shown_.find(wanted) != std::string::npos;
  }
  // Reads until the daemon closes (true) or `timeout_s` passes.
  bool WaitClosed(int timeout_s = 30) {
    SetReadTimeout(timeout_s);
    while (!closed_ && ReadOne()) {
    }
    return closed_;
  }
  void Close() {
    boost::beast::error_code ec;
    ws_.next_layer().close(ec);
  }
  const std::string& shown() const { return shown_; }
  const std::string& said() const { return said_; }
  bool closed() const { return closed_; }

 private:
  void SetReadTimeout(int seconds) {
    timeval tv{seconds, 0};
    ::setsockopt(ws_.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  // One message; false when the connection ended (closed_) or a read timed out.
  bool ReadOne() {
    boost::beast::flat_buffer buffer;
    boost::beast::error_code ec;
    ws_.read(buffer, ec);
    if (ec == boost::beast::websocket::error::closed || ec == boost::asio::error::eof ||
        ec == boost::asio::error::connection_reset) {
      closed_ = true;
      return false;
    }
    if (ec) return false;  // A timeout: the caller's deadline decides.
    std::string data = boost::beast::buffers_to_string(buffer.data());
    if (ws_.got_text()) {
      said_ += data;
    } else {
      shown_ += data;
    }
    return true;
  }

  boost::asio::io_context io_;
  boost::beast::websocket::stream<boost::asio::ip::tcp::socket> ws_{io_};
  std::string shown_;
  std::string said_;
  bool closed_ = false;
};

}  // namespace ty::testing
