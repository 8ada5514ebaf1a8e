// The scalars in one TensorBoard event record (proto/tensorboard/event.proto), as the
// writers people use put them there: `simple_value` (torch.utils.tensorboard,
// tensorboardX, TF1's tf.summary.scalar) or a rank-0 tensor tagged with the `scalars`
// plugin (TF2's tf.summary.scalar). Other summaries (images, histograms, text) are
// not scalars and are left out.
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/time.h"

namespace ty::tensorboard {

struct ScalarPoint {
  std::string tag;
  int64_t step = 0;
  TimeMicros wall_time = 0;
  double value = 0;
};

// Tags longer than this are cut (a time series' display name; Vertex allows 128).
inline constexpr size_t kMaxTagBytes = 128;

// Appends the record's scalars to `out`. False when the bytes are not an Event.
bool DecodeScalars(std::string_view record, std::vector<ScalarPoint>* out);

// The bytes of an Event holding one simple_value scalar (tests and tools).
std::string EncodeScalarEvent(const std::string& tag, int64_t step, double wall_time_s,
                              float value);

}  // namespace ty::tensorboard
