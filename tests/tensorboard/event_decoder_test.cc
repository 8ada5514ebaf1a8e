#include "tensorboard/event_decoder.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tensorboard/event.pb.h"

namespace ty::tensorboard {
namespace {

namespace pb = trainyard::tensorboard;

std::vector<ScalarPoint> Decode(const pb::Event& e) {
  std::vector<ScalarPoint> out;
  EXPECT_TRUE(DecodeScalars(e.SerializeAsString(), &out));
  return out;
}

TEST(EventDecoderTest, ASimpleValueIsAScalar) {
  std::vector<ScalarPoint> out;
  ASSERT_TRUE(DecodeScalars(EncodeScalarEvent("loss", 7, 1700000000.5, 0.25f), &out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tag, "loss");
  EXPECT_EQ(out[0].step, 7);
  EXPECT_EQ(out[0].wall_time, 1700000000500000);
  EXPECT_DOUBLE_EQ(out[0].value, 0.25);
}

TEST(EventDecoderTest, TensorFlowTwosScalarTensorsAreScalars) {
  pb::Event e;
  e.set_step(3);
  pb::Summary::Value* f = e.mutable_summary()->add_value();
  f->set_tag("accuracy");
  f->mutable_metadata()->mutable_plugin_data()->set_plugin_name("scalars");
  f->mutable_tensor()->set_dtype(pb::DT_FLOAT);
  f->mutable_tensor()->add_float_val(0.75f);
  pb::Summary::Value* d = e.mutable_summary()->add_value();
  d->set_tag("lr");
  d->mutable_metadata()->mutable_plugin_data()->set_plugin_name("scalars");
  d->mutable_tensor()->set_dtype(pb::DT_DOUBLE);
  const double lr = 0.001;
  std::string raw(8, '\0');
  std::memcpy(raw.data(), &lr, 8);
  d->mutable_tensor()->set_tensor_content(raw);
  std::vector<ScalarPoint> out = Decode(e);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_DOUBLE_EQ(out[0].value, 0.75);
  EXPECT_DOUBLE_EQ(out[1].value, 0.001);
  EXPECT_EQ(out[1].step, 3);
}

TEST(EventDecoderTest, OtherSummariesAndEventsAreNotScalars) {
  pb::Event version;
  version.set_file_version("brain.Event:2");
  EXPECT_TRUE(Decode(version).empty());
  pb::Event image;
  pb::Summary::Value* v = image.mutable_summary()->add_value();
  v->set_tag("picture");
  v->set_image("png bytes");
  pb::Summary::Value* t = image.mutable_summary()->add_value();
  t->set_tag("text");
  t->mutable_metadata()->mutable_plugin_data()->set_plugin_name("text");
  t->mutable_tensor()->set_dtype(pb::DT_FLOAT);
  t->mutable_tensor()->add_float_val(1);
  EXPECT_TRUE(Decode(image).empty());
}

TEST(EventDecoderTest, BytesThatAreNoEventSaySo) {
  std::vector<ScalarPoint> out;
  EXPECT_FALSE(DecodeScalars(std::string("\xff\xff\xff\xff\xff", 5), &out));
  EXPECT_TRUE(out.empty());
}

TEST(EventDecoderTest, ALongTagIsCutAndAWildWallTimeIsZero) {
  std::vector<ScalarPoint> out;
  ASSERT_TRUE(DecodeScalars(EncodeScalarEvent(std::string(500, 't'), 1, 1e300, 1), &out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tag.size(), kMaxTagBytes);
  EXPECT_EQ(out[0].wall_time, 0);
}

}  // namespace
}  // namespace ty::tensorboard
