#include "tensorboard/event_decoder.h"

#include <cmath>
#include <cstring>
#include <optional>

#include "tensorboard/event.pb.h"

namespace ty::tensorboard {

namespace {

namespace pb = trainyard::tensorboard;

// The first element of a scalar tensor of a number type, if it has one.
std::optional<double> TensorScalar(const pb::TensorProto& t) {
  const std::string& raw = t.tensor_content();
  switch (t.dtype()) {
    case pb::DT_FLOAT:
      if (t.float_val_size() > 0) return t.float_val(0);
      if (raw.size() >= 4) {
        float f;
        std::memcpy(&f, raw.data(), 4);
        return f;
      }
      return std::nullopt;
    case pb::DT_DOUBLE:
      if (t.double_val_size() > 0) return t.double_val(0);
      if (raw.size() >= 8) {
        double d;
        std::memcpy(&d, raw.data(), 8);
        return d;
      }
      return std::nullopt;
    case pb::DT_INT32:
      if (t.int_val_size() > 0) return t.int_val(0);
      return std::nullopt;
    case pb::DT_INT64:
      if (t.int64_val_size() > 0) return static_cast<double>(t.int64_val(0));
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

bool IsScalarSummary(const pb::Summary::Value& v) {
  const pb::SummaryMetadata& m = v.metadata();
  return m.plugin_data().plugin_name() == "scalars" || m.data_class() == 1;
}

std::optional<double> ValueOf(const pb::Summary::Value& v) {
  if (v.has_simple_value()) return v.simple_value();
  if (v.has_tensor() && IsScalarSummary(v)) return TensorScalar(v.tensor());
  return std::nullopt;
}

}  // namespace

bool DecodeScalars(std::string_view record, std::vector<ScalarPoint>* out) {
  pb::Event event;
  if (!event.ParseFromArray(record.data(), static_cast<int>(record.size()))) return false;
  if (!event.has_summary()) return true;
  const double wall = event.wall_time();
  const TimeMicros wall_us =
      std::isfinite(wall) && std::fabs(wall) < 1e11 ? static_cast<TimeMicros>(wall * 1e6) : 0;
  for (const pb::Summary::Value& v : event.summary().value()) {
    std::optional<double> value = ValueOf(v);
    if (!value || v.tag().empty()) continue;
    out->push_back({v.tag().substr(0, kMaxTagBytes), event.step(), wall_us, *value});
  }
  return true;
}

std::string EncodeScalarEvent(const std::string& tag, int64_t step, double wall_time_s,
                              float value) {
  pb::Event event;
  event.set_wall_time(wall_time_s);
  event.set_step(step);
  pb::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(tag);
  v->set_simple_value(value);
  return event.SerializeAsString();
}

}  // namespace ty::tensorboard
