// HttpSession: request reading, dispatch, response writing and closing.
#include "api/http_session.h"

#include <boost/asio/dispatch.hpp>
#include <utility>

#include "api/http_status.h"
#include "api/query.h"

namespace ty::api::internal {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;

HttpSession::HttpSession(net::ip::tcp::socket socket, const Router* router,
                         const SessionLimits* limits)
    : stream_(std::move(socket)),
      router_(router),
      limits_(limits),
      timer_(stream_.get_executor()) {}

void HttpSession::Run() {
  // Start on the strand so every handler of this connection is serialized.
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadHeader(); });
}

void HttpSession::ReadHeader() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(limits_->max_header_bytes));
  parser_->body_limit(limits_->max_body_bytes);
  // One deadline for the whole request: a client dribbling bytes is cut too.
  stream_.expires_after(limits_->read_timeout);
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](error_code ec, std::size_t) { self->OnHeader(ec); });
}

void HttpSession::OnHeader(error_code ec) {
  if (ec) return OnReadError(ec);
  const auto& req = parser_->get();
  auto length = parser_->content_length();
  if (length && *length > limits_->max_body_bytes) {
    return OnReadError(http::error::body_limit);
  }
  // curl and others wait (up to a second) for this before sending a large body.
  if (beast::iequals(req[http::field::expect], "100-continue") && !parser_->is_done()) {
    continue_ = {http::status::continue_, req.version()};
    http::async_write(stream_, continue_, [self = shared_from_this()](error_code ec, std::size_t) {
      if (ec) return self->CloseNow();
      self->ReadBody();
    });
    return;
  }
  ReadBody();
}

void HttpSession::ReadBody() {
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](error_code ec, std::size_t) { self->OnBody(ec); });
}

void HttpSession::OnBody(error_code ec) {
  if (ec) return OnReadError(ec);
  Serve();
}

void HttpSession::OnReadError(error_code ec) {
  // The peer went away, or was silent too long: nothing to answer.
  if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
      ec == net::error::eof || ec == beast::error::timeout ||
      ec.category() != beast::http::make_error_code(http::error::end_of_stream).category()) {
    return CloseNow();
  }
  // Malformed or oversized input: answer, then close, since the rest of the stream
  // cannot be trusted to start at a request boundary.
  if (ec == http::error::body_limit) {
    return Write(ErrorResponse(InvalidArgument("Request payload size exceeds the limit: " +
                                               std::to_string(limits_->max_body_bytes) + " bytes."),
                               413),
                 false);
  }
  if (ec == http::error::header_limit) {
    return Write(
        ErrorResponse(InvalidArgument("Request headers exceed the limit: " +
                                      std::to_string(limits_->max_header_bytes) + " bytes."),
                      431),
        false);
  }
  Write(ErrorResponse(InvalidArgument("Malformed HTTP request: " + ec.message())), false);
}

void HttpSession::Serve() {
  const auto& req = parser_->get();
  HttpRequest request;
  request.method = std::string(req.method_string());
  std::string_view target(req.target().data(), req.target().size());
  size_t question = target.find('?');
  request.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) request.query = ParseQuery(target.substr(question + 1));
  request.body = req.body();
  const bool keep_alive = req.keep_alive();

  Dispatch dispatch = router_->Handle(request);
  if (dispatch.follow) return StartFollow(std::move(*dispatch.follow));
  Write(std::move(dispatch.response), keep_alive);
}

void HttpSession::Write(HttpResponse response, bool keep_alive) {
  unsigned version = parser_ && parser_->is_header_done() ? parser_->get().version() : 11;
  response_ = {};
  response_.version(version == 10 ? 10 : 11);
  response_.result(static_cast<unsigned>(response.status));
  // Beast knows no reason phrase for Google's 499 (CANCELLED).
  if (response.status == 499) response_.reason("Client Closed Request");
  response_.set(http::field::content_type, response.content_type);
  response_.body() = std::move(response.body);
  response_.keep_alive(keep_alive);
  response_.prepare_payload();
  stream_.expires_after(limits_->write_timeout);
  http::async_write(stream_, response_,
                    [self = shared_from_this(), keep_alive](error_code ec, std::size_t) {
                      self->OnWrite(keep_alive, ec);
                    });
}

void HttpSession::OnWrite(bool keep_alive, error_code ec) {
  if (ec) return CloseNow();
  if (!keep_alive || response_.need_eof()) return CloseGracefully();
  ReadHeader();
}

void HttpSession::CloseGracefully() {
  error_code ignored;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  Drain(true);
}

// Reads and discards until the peer closes or the linger time is up: closing with
// unread input makes the kernel send a reset, which can destroy the answer in flight.
void HttpSession::Drain(bool first) {
  if (first) stream_.expires_after(limits_->linger);
  stream_.async_read_some(net::buffer(peek_),
                          [self = shared_from_this()](error_code ec, std::size_t) {
                            if (ec) return self->CloseNow();
                            self->Drain(false);
                          });
}

void HttpSession::CloseNow() {
  if (closed_) return;
  closed_ = true;
  timer_.cancel();
  error_code ignored;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
}

}  // namespace ty::api::internal
