// HttpSession: the `follow=true` log stream (see the diagram in http_session.h).
//
// The answer is HTTP/1.1 chunked `application/x-ndjson`, not `application/json`: the
// body is an open-ended sequence of JSON objects, one per line, not one JSON
// document, and a client must be able to act on each line as it arrives. The
// connection closes when the stream ends (the socket carries a pending read that
// watches for the peer hanging up, which rules out reusing it for another request).
#include <utility>

#include "api/http_session.h"

namespace ty::api::internal {

namespace http = boost::beast::http;
namespace net = boost::asio;

template <class Stream>
void HttpSession<Stream>::StartFollow(LogFollow follow) {
  follow_ = std::move(follow);
  // Cleared in place, not assigned a fresh header: a temporary's destructor here was left
  // undefined by clang when this file and http_session.cc (the explicit instantiation)
  // are separate units, as in the sanitizer builds (CMakeLists.txt).
  stream_header_.clear();
  stream_header_.version(11);
  stream_header_.result(http::status::ok);
  stream_header_.set(http::field::content_type, "application/x-ndjson; charset=UTF-8");
  stream_header_.set(http::field::cache_control, "no-cache");
  stream_header_.keep_alive(false);
  stream_header_.chunked(true);
  stream_serializer_.emplace(stream_header_);

  // The stream may be quiet for hours: no read deadline, but a write deadline is set
  // before each write (tcp_stream only re-arms the timer of the idle direction).
  Lowest().expires_never();
  WatchPeer();
  Lowest().expires_after(limits_->write_timeout);
  http::async_write_header(
      stream_, *stream_serializer_,
      [self = this->shared_from_this()](error_code ec, std::size_t) { self->OnChunkWritten(ec); });
}

template <class Stream>
void HttpSession<Stream>::WatchPeer() {
  watching_ = true;
  stream_.async_read_some(
      net::buffer(peek_), [self = this->shared_from_this()](error_code ec, std::size_t) {
        self->watching_ = false;
        if (self->closed_) return;
        if (self->finishing_) {
          // Cancelled by FinishFollow: now wait for the peer to close, briefly.
          return self->Drain(true);
        }
        if (ec) {
          self->peer_gone_ = true;
          self->timer_.cancel();  // Wakes Pump if it is waiting; a pending write fails alone.
          return;
        }
        // A client may send bytes (e.g. a pipelined request); they are ignored.
        self->Lowest().expires_never();
        self->WatchPeer();
      });
}

template <class Stream>
void HttpSession<Stream>::OnChunkWritten(error_code ec) {
  if (ec || peer_gone_) return CloseNow();
  Pump();
}

template <class Stream>
void HttpSession<Stream>::Pump() {
  if (peer_gone_) return CloseNow();
  FollowChunk chunk = router_->NextChunk(&*follow_);
  if (!chunk.data.empty()) {
    chunk_ = std::move(chunk.data);
    Lowest().expires_after(limits_->write_timeout);
    net::async_write(stream_, http::make_chunk(net::buffer(chunk_)),
                     [self = this->shared_from_this()](error_code ec, std::size_t) {
                       self->OnChunkWritten(ec);
                     });
    return;
  }
  if (follow_->done) {
    Lowest().expires_after(limits_->write_timeout);
    net::async_write(stream_, http::make_chunk_last(),
                     [self = this->shared_from_this()](error_code ec, std::size_t) {
                       if (ec) return self->CloseNow();
                       self->FinishFollow();
                     });
    return;
  }
  timer_.expires_after(limits_->follow_poll);
  timer_.async_wait([self = this->shared_from_this()](error_code ec) {
    if (self->closed_ || self->peer_gone_) return self->CloseNow();
    self->Pump();
  });
}

template <class Stream>
void HttpSession<Stream>::FinishFollow() {
  finishing_ = true;
  error_code ignored;
  Lowest().socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  if (watching_) {
    // The watch read completes with operation_aborted and starts the drain.
    Lowest().cancel();
  } else {
    Drain(true);
  }
}

#define TY_FOLLOW_MEMBERS(S)                                   \
  template void HttpSession<S>::StartFollow(LogFollow follow); \
  template void HttpSession<S>::Pump();                        \
  template void HttpSession<S>::OnChunkWritten(error_code ec); \
  template void HttpSession<S>::WatchPeer();                   \
  template void HttpSession<S>::FinishFollow();
TY_FOLLOW_MEMBERS(PlainStream)
TY_FOLLOW_MEMBERS(TlsStream)
#undef TY_FOLLOW_MEMBERS

}  // namespace ty::api::internal
