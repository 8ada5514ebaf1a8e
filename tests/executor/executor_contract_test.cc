// The executor contract (executor.h) checked against every local backend.
#include "executor/executor_contract_suite.h"

namespace ty::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(
    Backends, ExecutorContractTest,
    ::testing::Values(
        BackendFactory{"Container", [] { return std::make_unique<ContainerBackend>(); }},
        BackendFactory{"WarmContainer", [] { return std::make_unique<WarmContainerBackend>(); }},
        BackendFactory{"LibpodContainer",
                       [] { return std::make_unique<LibpodContainerBackend>(); }},
        BackendFactory{"SlotsContainer", [] { return std::make_unique<SlotsContainerBackend>(); }},
        BackendFactory{"Process", [] { return std::make_unique<ProcessBackend>(); }}),
    [](const ::testing::TestParamInfo<BackendFactory>& info) { return info.param.name; });

}  // namespace
}  // namespace ty::testing
