// The shared wire helpers behind both dialects: proto3 JSON scalar rules, labels,
// machine types and GPU counts (docs/contracts/vertex-v1.md §9, docs/contracts/ml-v1.md §9).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/machine_types.h"
#include "wire/wire_json.h"

namespace ty::wire::internal {

using namespace model;
using namespace model::internal;  // The machine-type rules the wire checks.
namespace {

using nlohmann::json;

TEST(WireJsonTest, IntegersFromNumbersAndDigitStrings) {
  int64_t v = 0;
  EXPECT_TRUE(ReadInteger(json(7), &v));
  EXPECT_EQ(v, 7);
  EXPECT_TRUE(ReadInteger(json("9223372036854775807"), &v));
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_TRUE(ReadInteger(json("-3"), &v));
  EXPECT_EQ(v, -3);
  EXPECT_TRUE(ReadInteger(json(2.0), &v));  // Integral float.
  EXPECT_EQ(v, 2);
  for (const json& bad : {json(2.5), json("2.0"), json("+1"), json(""), json("1 "), json(" 1"),
                          json("9223372036854775808"), json(true), json::array(), json(nullptr),
                          json(18446744073709551615ULL)}) {
    EXPECT_FALSE(ReadInteger(bad, &v)) << bad.dump();
  }
}

TEST(WireJsonTest, ReadersRecordCanonicalForms) {
  json in = json::parse(R"({"count": 3, "small": "4", "name": "x", "kind": 5, "wait": "1.5s",
                            "list_field": ["a"], "map": {"k": "v"}, "flag": true, "gone": null})");
  Result<WireObject> o = WireObject::Open(
      in, "root", {"count", "small", "name", "kind", "wait", "listField", "map", "flag", "gone"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  int64_t count = 0;
  int32_t small = 0;
  std::string name, kind;
  DurationMicros wait = 0;
  std::vector<std::string> list;
  std::map<std::string, std::string> map;
  bool flag = false;
  ASSERT_TRUE(o->Int64("count", &count).ok());
  ASSERT_TRUE(o->Int32("small", &small).ok());
  ASSERT_TRUE(o->String("name", &name).ok());
  ASSERT_TRUE(o->Enum("kind", VertexAcceleratorTypes(), &kind).ok());
  ASSERT_TRUE(o->Duration("wait", &wait).ok());
  ASSERT_TRUE(o->StringList("listField", &list, 10).ok());
  ASSERT_TRUE(o->StringMap("map", &map, 10).ok());
  EXPECT_EQ(o->StringList("listField", &list, 0).field(), "root.listField") << "past its bound";
  ASSERT_TRUE(o->Bool("flag", &flag).ok());
  std::string untouched = "keep";
  ASSERT_TRUE(o->String("gone", &untouched).ok());  // null = unset.
  EXPECT_EQ(untouched, "keep");
  EXPECT_EQ(kind, "NVIDIA_TESLA_T4");
  EXPECT_EQ(wait, 1500000);
  EXPECT_EQ(o->canonical(), json::parse(R"({"count": "3", "small": 4, "name": "x",
      "kind": "NVIDIA_TESLA_T4", "wait": "1.5s", "listField": ["a"], "map": {"k": "v"}, "flag": true})"));
}

TEST(WireJsonTest, EnumsAreNamesOrNumbersAndOthersAreRefused) {
  json in = json::parse(R"({"a": "TPU_V2", "b": 7, "c": "7", "d": 99, "e": true, "f": "NOPE"})");
  Result<WireObject> o = WireObject::Open(in, "", {"a", "b", "c", "d", "e", "f"});
  ASSERT_TRUE(o.ok());
  std::string a, b, c, unused;
  EXPECT_TRUE(o->Enum("a", MlAcceleratorTypes(), &a).ok());
  EXPECT_EQ(a, "TPU_V2");
  EXPECT_TRUE(o->Enum("b", MlAcceleratorTypes(), &b).ok());
  EXPECT_EQ(b, "TPU_V2");
  EXPECT_TRUE(o->Enum("c", MlAcceleratorTypes(), &c).ok());
  EXPECT_EQ(c, "TPU_V2");
  EXPECT_EQ(o->canonical()["b"], "TPU_V2");  // Stored by name.
  for (const char* field : {"d", "e", "f"}) {
    Status s = o->Enum(field, MlAcceleratorTypes(), &unused);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << field;
    EXPECT_EQ(s.field(), field);
  }
}

TEST(WireJsonTest, SnakeCaseAndPaths) {
  EXPECT_EQ(SnakeCase("bootDiskSizeGb"), "boot_disk_size_gb");
  EXPECT_EQ(SnakeCase("useChiefInTfConfig"), "use_chief_in_tf_config");
  EXPECT_EQ(JoinPath("", "jobId"), "jobId");
  EXPECT_EQ(JoinPath("a", "b"), "a.b");
  EXPECT_EQ(IndexPath("a.b", 2), "a.b[2]");
  EXPECT_EQ(Utf8Length("héllo"), 5u);
}

TEST(WireJsonTest, GcsUrisAndIdentifiers) {
  EXPECT_TRUE(IsGcsUri("gs://bucket"));
  EXPECT_TRUE(IsGcsUri("gs://my-bucket_1.x/dir/"));
  EXPECT_FALSE(IsGcsUri("gs://"));
  EXPECT_FALSE(IsGcsUri("gs://Bucket/x"));
  EXPECT_FALSE(IsGcsUri("gs://-b/x"));
  EXPECT_FALSE(IsGcsUri("s3://b/x"));
  // Issue 30 item 6: a URI a job names is a path the bucket can hold, checked at
  // submit (gs://b/../a/x was accepted on 3c2a683 and failed only at launch).
  for (const char* ok : {"gs://b", "gs://b/", "gs://b/dir/", "gs://b/a/b.c", "gs://b/..x/y"}) {
    EXPECT_TRUE(CheckGcsUri(ok, "f", false).ok()) << ok;
  }
  for (const char* bad : {"gs://b/../a/x", "gs://b/./x", "gs://b//x", "gs://b/x/..", "gs://b//",
                          "gs://b/a//", "gs://B/x", "gs://b/x/../"}) {
    Status s = CheckGcsUri(bad, "f", false);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("Field: f Error: must"), std::string::npos) << s.message();
  }
  EXPECT_TRUE(CheckGcsUri("gs://b/p-0.1.tar.gz", "f", true).ok());
  for (const char* bad : {"gs://b", "gs://b/", "gs://b/dir/", "gs://b/../p.tar.gz"}) {
    EXPECT_FALSE(CheckGcsUri(bad, "f", true).ok()) << bad;
  }
  // Issue 30 item 6: names shown in tables refuse what reorders or hides text.
  for (const char* ok : {"train-1", "héllo wörld", "日本語",
                         "\xe2\x80\x90"
                         "dash"}) {
    EXPECT_FALSE(HasDisplayControl(ok)) << ok;
  }
  for (const char* bad : {"a\x01"
                          "b",
                          "a\x7f", "evil\xe2\x80\xaegnp.exe", "\xe2\x80\xaa", "\xe2\x81\xa6x",
                          "\xe2\x81\xa9", "\xe2\x80\x8f", "\xd8\x9c", "\xc2\x85"}) {
    EXPECT_TRUE(HasDisplayControl(bad)) << bad;
  }
  EXPECT_TRUE(IsCIdentifier("_A1"));
  EXPECT_FALSE(IsCIdentifier("1A"));
  EXPECT_FALSE(IsCIdentifier("A-B"));
  EXPECT_FALSE(IsCIdentifier(""));
}

TEST(WireJsonTest, Labels) {
  EXPECT_TRUE(ValidateLabels("labels", {{"team", "ml"}, {"a_b-1", ""}, {"ünï", "çödé"}}).ok());
  EXPECT_EQ(ValidateLabels("labels", {{"", "x"}}).field(), "labels");
  EXPECT_EQ(ValidateLabels("labels", {{"_x", "x"}}).field(), "labels");
  EXPECT_EQ(ValidateLabels("labels", {{"x", "A"}}).field(), "labels.x");
  std::string intl64;
  for (int i = 0; i < 64; ++i) intl64 += "ü";
  EXPECT_TRUE(ValidateLabels("labels", {{intl64, intl64}}).ok());  // 64 characters, 128 bytes.
}

TEST(MachineTypesTest, EveryVertexTypeInTheSpecListIsAccepted) {
  for (const char* t :
       {"e2-standard-4",    "e2-highmem-16",   "e2-highcpu-32",    "n1-standard-96",
        "n1-highmem-2",     "n1-highcpu-16",   "n2-standard-8",    "n4-highmem-4",
        "c2-standard-60",   "m1-ultramem-160", "m1-megamem-96",    "a2-highgpu-1g",
        "a2-megagpu-16g",   "a2-ultragpu-8g",  "a3-highgpu-8g",    "a3-megagpu-8g",
        "a3-ultragpu-8g",   "a4-highgpu-8g",   "a4x-highgpu-4g",   "g2-standard-96",
        "g4-standard-384",  "cloud-tpu",       "ct5lp-hightpu-4t", "ct6e-standard-8t",
        "tpu7x-standard-4t"}) {
    EXPECT_TRUE(IsVertexMachineType(t)) << t;
  }
  for (const char* t : {"", "standard", "n1", "n1-standard", "x1-standard-4", "n1-Standard-4",
                        "n1-standard-0", "n1-standard-4x", "cloud_tpu"}) {
    EXPECT_FALSE(IsVertexMachineType(t)) << t;
  }
}

TEST(MachineTypesTest, MlTypes) {
  EXPECT_TRUE(IsMlComputeEngineType("n1-standard-4"));
  EXPECT_TRUE(IsMlComputeEngineType("n1-highmem-2"));
  EXPECT_TRUE(IsMlComputeEngineType("a2-megagpu-16g"));
  EXPECT_FALSE(IsMlComputeEngineType("n1-standard-2"));
  EXPECT_FALSE(IsMlComputeEngineType("n1-highcpu-8"));
  EXPECT_FALSE(IsMlComputeEngineType("e2-standard-4"));
  std::string accel;
  int count = -1;
  EXPECT_TRUE(MlLegacyType("complex_model_l_v100", &accel, &count));
  EXPECT_EQ(accel, "NVIDIA_TESLA_V100");
  EXPECT_EQ(count, 8);
  EXPECT_TRUE(MlLegacyType("large_model", &accel, &count));
  EXPECT_EQ(accel, "");
  EXPECT_EQ(count, 0);
  EXPECT_FALSE(MlLegacyType("cloud_tpu", &accel, &count));
  EXPECT_FALSE(MlLegacyType("n1-standard-4", &accel, &count));
}

TEST(MachineTypesTest, GpuCountRules) {
  auto ok = [](const char* m, const char* a, int n) {
    return CheckAcceleratorCount(m, a, n, "c").ok();
  };
  EXPECT_EQ(ImpliedGpuCount("a2-megagpu-16g"), 16);
  EXPECT_EQ(ImpliedGpuCount("g2-standard-24"), 2);
  EXPECT_EQ(ImpliedGpuCount("n1-standard-4"), std::nullopt);
  EXPECT_TRUE(ok("a3-highgpu-8g", "NVIDIA_H100_80GB", 8));
  EXPECT_FALSE(ok("a3-highgpu-8g", "NVIDIA_H100_80GB", 4));
  EXPECT_TRUE(ok("g2-standard-48", "NVIDIA_L4", 4));
  EXPECT_FALSE(ok("g2-standard-48", "NVIDIA_L4", 1));
  EXPECT_TRUE(ok("n1-standard-8", "NVIDIA_TESLA_V100", 1));
  EXPECT_FALSE(ok("n1-standard-16", "NVIDIA_TESLA_V100", 1));
  EXPECT_TRUE(ok("n1-highmem-16", "NVIDIA_TESLA_V100", 2));
  EXPECT_TRUE(ok("n1-standard-96", "NVIDIA_TESLA_V100", 8));
  EXPECT_FALSE(ok("n1-standard-96", "NVIDIA_TESLA_V100", 4));
  EXPECT_TRUE(ok("n1-standard-16", "NVIDIA_TESLA_T4", 1));
  EXPECT_FALSE(ok("n1-standard-32", "NVIDIA_TESLA_T4", 1));
  EXPECT_TRUE(ok("n1-standard-64", "NVIDIA_TESLA_P4", 4));
  EXPECT_FALSE(ok("n1-standard-4", "NVIDIA_TESLA_T4", 3));
  EXPECT_TRUE(ok("n1-standard-4", "", 0));
  EXPECT_TRUE(ok("cloud-tpu", "TPU_V3", 8));
  EXPECT_TRUE(ok("cloud-tpu", "TPU_V2", 64));
  EXPECT_FALSE(ok("cloud-tpu", "TPU_V2", 16));
  EXPECT_EQ(CheckAcceleratorCount("a2-highgpu-2g", "NVIDIA_TESLA_A100", 1, "x.count").field(),
            "x.count");
}

TEST(MachineTypesTest, EnumTablesMatchClientWireNumbers) {
  EXPECT_EQ(EnumNumber(VertexAcceleratorTypes(), "NVIDIA_TESLA_A100"), 8);
  EXPECT_EQ(EnumNumber(VertexAcceleratorTypes(), "NVIDIA_RTX_PRO_6000"), 18);
  EXPECT_EQ(EnumNumber(VertexAcceleratorTypes(), "TPU_V5_LITEPOD"), 12);
  EXPECT_EQ(EnumName(VertexAcceleratorTypes(), 13), "NVIDIA_H100_80GB");
  EXPECT_EQ(EnumName(VertexAcceleratorTypes(), 99), "");
  EXPECT_EQ(EnumNumber(VertexSchedulingStrategies(), "FLEX_START"), 6);
  EXPECT_EQ(EnumName(VertexSchedulingStrategies(), 5), "");
  EXPECT_EQ(EnumNumber(VertexReservationAffinityTypes(), "SPECIFIC_RESERVATION"), 3);
}

}  // namespace
}  // namespace ty::wire::internal
