#include "model/machine_catalog.h"

#include <gtest/gtest.h>

namespace ty::model {
namespace {

TEST(MachineCatalogTest, ComputeEngineAndLegacyTypesHaveTheirSizes) {
  struct Case {
    const char* type;
    double vcpus, memory_gb;
  };
  for (const Case& c : std::vector<Case>{{"n1-standard-4", 4, 15},
                                         {"n1-highmem-2", 2, 13},
                                         {"n1-highcpu-16", 16, 14.4},
                                         {"e2-standard-8", 8, 32},
                                         {"n2-highmem-4", 4, 32},
                                         {"c2-standard-60", 60, 240},
                                         {"g2-standard-24", 24, 96},
                                         {"a2-highgpu-2g", 24, 170},
                                         {"a2-megagpu-16g", 96, 1360},
                                         {"a3-highgpu-8g", 208, 1872},
                                         {"m1-ultramem-40", 40, 961},
                                         {"standard", 4, 15},
                                         {"complex_model_m_gpu", 16, 14.4},
                                         {"large_model_v100", 8, 52}}) {
    std::optional<MachineShape> s = MachineShapeOf(c.type);
    ASSERT_TRUE(s.has_value()) << c.type;
    EXPECT_DOUBLE_EQ(s->vcpus, c.vcpus) << c.type;
    EXPECT_DOUBLE_EQ(s->memory_gb, c.memory_gb) << c.type;
  }
  EXPECT_FALSE(MachineShapeOf("n1-standard").has_value());
  EXPECT_FALSE(MachineShapeOf("x9-standard-4").has_value());
}

TEST(MachineCatalogTest, OverridesWin) {
  MachineOverrides o = {{"n1-standard-4", MachineShape{1, 2}}, {"lab-box", MachineShape{6, 7}}};
  EXPECT_DOUBLE_EQ(MachineShapeOf("n1-standard-4", o)->vcpus, 1);
  EXPECT_DOUBLE_EQ(MachineShapeOf("lab-box", o)->memory_gb, 7);
}

}  // namespace
}  // namespace ty::model
