// Internal to api/ (includes Boost.Beast: include it only from api/*.cc).
//
// HttpSession: one accepted TCP connection. Reads requests one at a time (HTTP/1.1
// keep-alive, no pipelining in parallel), hands each to the Router, writes the
// answer, and runs `follow=true` log streams:
//
//   ReadHeader --(Expect: 100-continue)--> write 100 --> ReadBody --> Router::Handle
//       ^                                                               |
//       +------------------- keep-alive <------ write response <--------+
//                                                                       | follow
//   write chunked header --> NextChunk --data--> write chunk --+        v
//                              ^  |idle                        |   (stream)
//                              |  +--> 150 ms timer -----------+
//                              +-----------------------------------+
//   done --> zero chunk --> close.   A read armed on the socket meanwhile notices a
//   client that hangs up while the job is quiet, so an idle stream does not linger.
//
// Limits: 64 KiB of headers, `max_body_bytes` of body (413 beyond), 60 s to read a
// request (slow or silent clients are cut). Errors that leave unread input (bad
// syntax, oversized body) answer, then half-close and drain for up to 5 s before
// closing, so the client reads the answer instead of a connection reset.
//
// TLS: HttpSession<TlsStream> first does the server handshake (within the read
// timeout), then the same; the plain and TLS sessions are one template.
//
// Thread-safety: every handler runs on the connection's strand; the object lives as
// long as an operation holds its shared_ptr.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "api/handlers.h"
#include "api/http_types.h"

namespace ty::api::internal {

struct SessionLimits {
  size_t max_body_bytes = 4 << 20;
  uint64_t max_upload_bytes = uint64_t{1} << 40;  // Bodies the router spools to a file.
  size_t max_header_bytes = 64 * 1024;
  std::chrono::seconds read_timeout{60};
  std::chrono::seconds write_timeout{60};
  std::chrono::seconds linger{5};
  std::chrono::milliseconds follow_poll{150};
};

using PlainStream = boost::beast::tcp_stream;
using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

template <class Stream>
class HttpSession : public std::enable_shared_from_this<HttpSession<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // `router`, `limits` and `tls` (TlsStream only; null for PlainStream) must outlive
  // every session (the server owns them).
  HttpSession(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls,
              const Router* router, const SessionLimits* limits);

  void Run();

 private:
  using error_code = boost::beast::error_code;

  boost::beast::tcp_stream& Lowest() { return boost::beast::get_lowest_layer(stream_); }
  const boost::beast::tcp_stream& Lowest() const { return boost::beast::get_lowest_layer(stream_); }
  static Stream MakeStream(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls);

  // Request / response (http_session.cc).
  void ReadHeader();
  void OnHeader(error_code ec);
  void ReadBody();
  void OnBody(error_code ec);
  void OnReadError(error_code ec);
  static constexpr size_t kTrimAfterBodyBytes = 256 << 10;
  void ReleaseBody(HttpRequest* request);
  void Serve();
  void StartShell(HttpRequest request);
  void Write(HttpResponse response, bool keep_alive);
  // A response whose body comes from a BodySource, 1 MiB at a time.
  void WriteSource(HttpResponse response, bool keep_alive);
  void WriteSourceChunk(bool keep_alive);
  // Switches the read to a file when the router spools this request's body.
  bool SpoolBody();
  HttpRequest RequestHead() const;
  void OnWrite(bool keep_alive, error_code ec);
  void CloseGracefully();  // Half-close, drain, close.
  void Drain(bool first);
  void CloseNow();

  // Log follow stream (log_stream.cc).
  void StartFollow(LogFollow follow);
  void Pump();
  void OnChunkWritten(error_code ec);
  void WatchPeer();
  void FinishFollow();

  Stream stream_;
  boost::beast::flat_buffer buffer_;
  const Router* router_;
  const SessionLimits* limits_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  // Instead of parser_ when the body is spooled to `spool_path_` (uploads).
  std::optional<boost::beast::http::request_parser<boost::beast::http::file_body>> file_parser_;
  std::string spool_path_;
  unsigned version_ = 11;
  std::string peer_;  // The client's address, read once: it never changes on a connection.
  // Streamed response (WriteSource).
  boost::beast::http::response<boost::beast::http::buffer_body> source_response_;
  std::optional<boost::beast::http::response_serializer<boost::beast::http::buffer_body>>
      source_serializer_;
  std::shared_ptr<BodySource> source_;
  uint64_t source_at_ = 0;
  std::string source_chunk_;
  boost::beast::http::response<boost::beast::http::string_body> response_;
  boost::beast::http::response<boost::beast::http::empty_body> continue_;
  bool closed_ = false;

  // Follow stream state.
  std::optional<LogFollow> follow_;
  boost::beast::http::response<boost::beast::http::empty_body> stream_header_;
  std::optional<boost::beast::http::response_serializer<boost::beast::http::empty_body>>
      stream_serializer_;
  std::string chunk_;  // Bytes of the chunk being written.
  boost::asio::steady_timer timer_;
  char peek_[512];         // Discarded input: the peer watch and the drain.
  bool watching_ = false;  // A peer-watch read is pending.
  bool peer_gone_ = false;
  bool finishing_ = false;
};

// Defined, and instantiated for both streams, in http_session.cc and log_stream.cc.
extern template class HttpSession<PlainStream>;
extern template class HttpSession<TlsStream>;

}  // namespace ty::api::internal
