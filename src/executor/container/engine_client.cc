#include "executor/container/engine_client.h"

namespace ty::executor {

// ---- LogDemuxer -------------------------------------------------------------

void LogDemuxer::Feed(std::string_view bytes) {
  if (mode_ == Mode::kUnknown) {
    pending_.append(bytes);
    if (pending_.size() < 8) return;
    const auto* p = reinterpret_cast<const unsigned char*>(pending_.data());
    bool mux = p[0] <= 2 && p[1] == 0 && p[2] == 0 && p[3] == 0;
    mode_ = mux ? Mode::kMultiplexed : Mode::kRaw;
    std::string buffered;
    buffered.swap(pending_);
    Feed(buffered);
    return;
  }
  if (mode_ == Mode::kRaw && frames_only_) {
    unframed_.append(bytes.substr(0, std::min<size_t>(bytes.size(), 4096 - unframed_.size())));
    return;
  }
  if (mode_ == Mode::kRaw) {
    AppendPayload(1, bytes);
    return;
  }
  while (!bytes.empty()) {
    if (frame_left_ > 0) {
      size_t n = std::min<size_t>(frame_left_, bytes.size());
      AppendPayload(frame_stream_, bytes.substr(0, n));
      frame_left_ -= static_cast<uint32_t>(n);
      bytes.remove_prefix(n);
      continue;
    }
    size_t need = 8 - pending_.size();
    size_t n = std::min(need, bytes.size());
    pending_.append(bytes.substr(0, n));
    bytes.remove_prefix(n);
    if (pending_.size() < 8) return;
    const auto* h = reinterpret_cast<const unsigned char*>(pending_.data());
    // Stream 0 (stdin) never carries output; treat it as stdout rather than drop it.
    frame_stream_ = h[0] == 2 ? 2 : 1;
    frame_left_ = (uint32_t{h[4]} << 24) | (uint32_t{h[5]} << 16) | (uint32_t{h[6]} << 8) | h[7];
    pending_.clear();
    if (timestamps_ && !partial_[frame_stream_].empty()) skip_time_[frame_stream_] = true;
  }
}

void LogDemuxer::AppendPayload(int stream, std::string_view payload) {
  std::string& partial = partial_[stream];
  if (skip_time_[stream]) {
    size_t space = payload.find(' ');
    if (space == std::string_view::npos) return;  // The time continues in the next read.
    payload.remove_prefix(space + 1);
    skip_time_[stream] = false;
  }
  while (!payload.empty()) {
    size_t nl = payload.find('\n');
    if (nl == std::string_view::npos) {
      partial.append(payload);
      return;
    }
    if (partial.empty()) {
      on_line_(stream, payload.substr(0, nl));
    } else {
      partial.append(payload.substr(0, nl));
      on_line_(stream, partial);
      partial.clear();
    }
    payload.remove_prefix(nl + 1);
  }
}

void LogDemuxer::Finish() {
  if (mode_ == Mode::kUnknown && !pending_.empty()) {
    // Fewer than 8 bytes in all: only a raw stream can be that short.
    mode_ = Mode::kRaw;
    AppendPayload(1, pending_);
    pending_.clear();
  }
  for (int s = 1; s <= 2; ++s) {
    if (!partial_[s].empty()) {
      on_line_(s, partial_[s]);
      partial_[s].clear();
    }
  }
}

}  // namespace ty::executor
