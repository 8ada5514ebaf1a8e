// HttpSession: request reading, dispatch, response writing and closing.
#include "api/http_session.h"

#include <malloc.h>
#include <unistd.h>

#include <boost/asio/dispatch.hpp>
#include <cctype>
#include <limits>
#include <utility>

#include "api/http_status.h"
#include "api/query.h"
#include "api/shell_bridge.h"

namespace ty::api::internal {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;

template <class Stream>
Stream HttpSession<Stream>::MakeStream(net::ip::tcp::socket socket, net::ssl::context* tls) {
  if constexpr (kTls) {
    return Stream(std::move(socket), *tls);
  } else {
    (void)tls;
    return Stream(std::move(socket));
  }
}

template <class Stream>
HttpSession<Stream>::HttpSession(net::ip::tcp::socket socket, net::ssl::context* tls,
                                 const Router* router, const SessionLimits* limits)
    : stream_(MakeStream(std::move(socket), tls)),
      router_(router),
      limits_(limits),
      timer_(stream_.get_executor()) {}

template <class Stream>
void HttpSession<Stream>::Run() {
  // Start on the strand so every handler of this connection is serialized.
  net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
    boost::system::error_code ec;
    self->peer_ = self->Lowest().socket().remote_endpoint(ec).address().to_string();
    if constexpr (kTls) {
      // The handshake counts against the read timeout: a client that connects and
      // says nothing is cut as a slow request is.
      self->Lowest().expires_after(self->limits_->read_timeout);
      self->stream_.async_handshake(net::ssl::stream_base::server, [self](error_code ec) {
        if (ec) return self->CloseNow();
        self->ReadHeader();
      });
    } else {
      self->ReadHeader();
    }
  });
}

template <class Stream>
void HttpSession<Stream>::ReadHeader() {
  file_parser_.reset();
  spool_path_.clear();
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(limits_->max_header_bytes));
  // The header parse would already refuse a Content-Length over the limit, before
  // OnHeader can route an upload to a file: limits are set once the route is known.
  // (Not boost::none: Boost 1.74 compares a Content-Length against an empty limit
  // as over it.)
  parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  // One deadline for the whole request: a client dribbling bytes is cut too.
  Lowest().expires_after(limits_->read_timeout);
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = this->shared_from_this()](error_code ec, std::size_t) { self->OnHeader(ec); });
}

template <class Stream>
HttpRequest HttpSession<Stream>::RequestHead() const {
  const auto& req = file_parser_ ? file_parser_->get().base() : parser_->get().base();
  HttpRequest request;
  request.method = std::string(req.method_string());
  std::string_view target(req.target().data(), req.target().size());
  size_t question = target.find('?');
  request.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) {
    request.raw_query = std::string(target.substr(question + 1));
    request.query = ParseQuery(request.raw_query);
  }
  for (const auto& field : req) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    request.headers[name] = std::string(field.value());
  }
  request.peer = peer_;
  request.tls = kTls;
  return request;
}

template <class Stream>
bool HttpSession<Stream>::SpoolBody() {
  std::optional<std::string> path = router_->SpoolFileFor(RequestHead());
  if (!path) return true;
  auto length = parser_->content_length();
  if (length && *length > limits_->max_upload_bytes) {
    router_->DropSpool(*path);
    ::unlink(path->c_str());
    OnReadError(http::error::body_limit);
    return false;
  }
  file_parser_.emplace(std::move(*parser_));
  parser_.reset();
  file_parser_->body_limit(limits_->max_upload_bytes);
  error_code ec;
  file_parser_->get().body().open(path->c_str(), beast::file_mode::write, ec);
  spool_path_ = *path;
  if (ec) {
    router_->DropSpool(spool_path_);
    Write(ErrorResponse(Internal("cannot spool the upload: " + ec.message())), false);
    return false;
  }
  // Beast reads at most the buffer's free capacity (<= 64 KiB) per call; the small
  // buffer left after a header would mean ~1 KiB reads and writes (70 MiB/s).
  buffer_.reserve(1 << 20);
  // Uploads may be large and slow: the read deadline covers the headers only.
  Lowest().expires_never();
  return true;
}

template <class Stream>
void HttpSession<Stream>::OnHeader(error_code ec) {
  if (ec) return OnReadError(ec);
  version_ = parser_->get().version();
  const bool has_body = !parser_->is_done();
  if (has_body && !SpoolBody()) return;
  if (parser_) {
    auto length = parser_->content_length();
    if (length && *length > limits_->max_body_bytes) return OnReadError(http::error::body_limit);
    parser_->body_limit(limits_->max_body_bytes);  // Chunked bodies are cut while read.
  }
  // curl and others wait (up to a second) for this before sending a large body.
  const auto& expect =
      file_parser_ ? file_parser_->get()[http::field::expect] : parser_->get()[http::field::expect];
  if (beast::iequals(expect, "100-continue") && has_body) {
    continue_ = {http::status::continue_, version_};
    http::async_write(stream_, continue_,
                      [self = this->shared_from_this()](error_code ec, std::size_t) {
                        if (ec) return self->CloseNow();
                        self->ReadBody();
                      });
    return;
  }
  ReadBody();
}

template <class Stream>
void HttpSession<Stream>::ReadBody() {
  auto done = [self = this->shared_from_this()](error_code ec, std::size_t) { self->OnBody(ec); };
  if (file_parser_) return http::async_read(stream_, buffer_, *file_parser_, std::move(done));
  http::async_read(stream_, buffer_, *parser_, std::move(done));
}

template <class Stream>
void HttpSession<Stream>::OnBody(error_code ec) {
  if (ec) {
    if (!spool_path_.empty()) {
      router_->DropSpool(spool_path_);
      ::unlink(spool_path_.c_str());
    }
    return OnReadError(ec);
  }
  Serve();
}

template <class Stream>
void HttpSession<Stream>::OnReadError(error_code ec) {
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

template <class Stream>
void HttpSession<Stream>::ReleaseBody(HttpRequest* request) {
  // A large body (and the JSON parsed from it) leaves free memory in malloc's arenas
  // that it keeps; a refused 4 MiB request once held +27 MB for good. Rare, so the
  // trim's cost (a walk of the heap) does not matter.
  std::string().swap(request->body);
  if (parser_) std::string().swap(parser_->get().body());
  ::malloc_trim(0);
}

template <class Stream>
void HttpSession<Stream>::Serve() {
  HttpRequest request = RequestHead();
  if (parser_ && IsShellUpgrade(request, boost::beast::websocket::is_upgrade(parser_->get()))) {
    return StartShell(std::move(request));
  }
  bool keep_alive = false;
  if (file_parser_) {
    file_parser_->get().body().close();
    request.body_file = spool_path_;
    keep_alive = file_parser_->get().keep_alive();
  } else {
    request.body = parser_->get().body();
    keep_alive = parser_->get().keep_alive();
  }
  Dispatch dispatch = router_->Handle(request);
  // What the handler did not move away (a rejected or copied upload) goes.
  if (!spool_path_.empty()) ::unlink(spool_path_.c_str());
  if (request.body.size() > kTrimAfterBodyBytes) ReleaseBody(&request);
  if (dispatch.follow) return StartFollow(std::move(*dispatch.follow));
  if (dispatch.shell) {  // Asked with an Upgrade header but no WebSocket handshake.
    dispatch.shell.reset();
    return Write(ErrorResponse(InvalidArgument("A shell opens over a WebSocket handshake.")),
                 false);
  }
  if (dispatch.response.source) return WriteSource(std::move(dispatch.response), keep_alive);
  Write(std::move(dispatch.response), keep_alive);
}

// The connection becomes a WebSocket carrying a replica's terminal (shell_bridge.h);
// this session ends here.
template <class Stream>
void HttpSession<Stream>::StartShell(HttpRequest request) {
  if (!SameOrigin(request)) {
    return Write(ErrorResponse(PermissionDenied(
                     "A shell opens only from this daemon's own pages (Origin is another site).")),
                 false);
  }
  std::make_shared<ShellBridge<Stream>>(std::move(stream_), parser_->release(), std::move(request),
                                        router_)
      ->Run();
}

template <class Stream>
void HttpSession<Stream>::Write(HttpResponse response, bool keep_alive) {
  response_ = {};
  response_.version(version_ == 10 ? 10 : 11);
  response_.result(static_cast<unsigned>(response.status));
  // Beast knows no reason phrase for Google's 499 (CANCELLED) or the 308 of
  // resumable uploads ("Resume Incomplete" on Google's front end).
  if (response.status == 499) response_.reason("Client Closed Request");
  if (response.status == 308) response_.reason("Resume Incomplete");
  response_.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) response_.set(name, value);
  response_.body() = std::move(response.body);
  response_.keep_alive(keep_alive);
  response_.prepare_payload();
  Lowest().expires_after(limits_->write_timeout);
  http::async_write(stream_, response_,
                    [self = this->shared_from_this(), keep_alive](error_code ec, std::size_t) {
                      self->OnWrite(keep_alive, ec);
                    });
}

template <class Stream>
void HttpSession<Stream>::WriteSource(HttpResponse response, bool keep_alive) {
  response_ = {};  // OnWrite asks it whether the connection must close.
  response_.version(version_ == 10 ? 10 : 11);
  response_.keep_alive(keep_alive);
  response_.prepare_payload();  // A length, so need_eof() is false on keep-alive.
  source_ = std::move(response.source);
  source_at_ = 0;
  source_response_ = {};
  source_response_.version(version_ == 10 ? 10 : 11);
  source_response_.result(static_cast<unsigned>(response.status));
  source_response_.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) source_response_.set(name, value);
  source_response_.content_length(source_->size());
  source_response_.keep_alive(keep_alive);
  source_response_.body().data = nullptr;
  source_response_.body().more = true;
  source_serializer_.emplace(source_response_);
  Lowest().expires_after(limits_->write_timeout);
  http::async_write_header(
      stream_, *source_serializer_,
      [self = this->shared_from_this(), keep_alive](error_code ec, std::size_t) {
        if (ec) return self->CloseNow();
        self->WriteSourceChunk(keep_alive);
      });
}

template <class Stream>
void HttpSession<Stream>::WriteSourceChunk(bool keep_alive) {
  constexpr size_t kChunk = 1 << 20;
  auto& body = source_response_.body();
  if (source_at_ >= source_->size()) {
    body.data = nullptr;
    body.size = 0;
    body.more = false;
  } else {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, source_->size() - source_at_));
    Result<std::string> piece = source_->Read(source_at_, n);
    // The header promised a length: a read failure can only end the connection.
    if (!piece.ok() || piece->empty()) return CloseNow();
    source_chunk_ = std::move(*piece);
    source_at_ += source_chunk_.size();
    body.data = source_chunk_.data();
    body.size = source_chunk_.size();
    body.more = true;
  }
  Lowest().expires_after(limits_->write_timeout);
  http::async_write(stream_, *source_serializer_,
                    [self = this->shared_from_this(), keep_alive](error_code ec, std::size_t) {
                      if (ec == http::error::need_buffer) ec = {};
                      if (ec) return self->CloseNow();
                      if (self->source_serializer_->is_done()) {
                        self->source_.reset();
                        return self->OnWrite(keep_alive, ec);
                      }
                      self->WriteSourceChunk(keep_alive);
                    });
}

template <class Stream>
void HttpSession<Stream>::OnWrite(bool keep_alive, error_code ec) {
  if (ec) return CloseNow();
  if (!keep_alive || response_.need_eof()) return CloseGracefully();
  ReadHeader();
}

template <class Stream>
void HttpSession<Stream>::CloseGracefully() {
  error_code ignored;
  Lowest().socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  Drain(true);
}

// Reads and discards until the peer closes or the linger time is up: closing with
// unread input makes the kernel send a reset, which can destroy the answer in flight.
template <class Stream>
void HttpSession<Stream>::Drain(bool first) {
  if (first) Lowest().expires_after(limits_->linger);
  stream_.async_read_some(net::buffer(peek_),
                          [self = this->shared_from_this()](error_code ec, std::size_t) {
                            if (ec) return self->CloseNow();
                            self->Drain(false);
                          });
}

template <class Stream>
void HttpSession<Stream>::CloseNow() {
  if (closed_) return;
  closed_ = true;
  timer_.cancel();
  error_code ignored;
  Lowest().socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  Lowest().socket().close(ignored);
}

// The members defined here, for both streams; log_stream.cc instantiates its own.
// (A unity build puts this file first: the class-wide instantiation covers only what
// is defined before it.)
template class HttpSession<PlainStream>;
template class HttpSession<TlsStream>;

}  // namespace ty::api::internal
