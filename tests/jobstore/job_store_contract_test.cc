// Runs the JobStore contract (job_store_contract.h) against both backends.
#include "jobstore/job_store_contract.h"

#include <gtest/gtest.h>

#include "jobstore/memory_job_store.h"
#include "jobstore/sqlite_job_store.h"

namespace ty::jobstore::testing {
namespace {

struct MemoryFactory {
  static std::unique_ptr<JobStore> Make() { return std::make_unique<MemoryJobStore>(); }
};

struct SqliteFactory {
  static std::unique_ptr<JobStore> Make() {
    Result<std::unique_ptr<SqliteJobStore>> store = SqliteJobStore::Open(":memory:");
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }
};

INSTANTIATE_TYPED_TEST_SUITE_P(Memory, JobStoreContractTest, MemoryFactory);
INSTANTIATE_TYPED_TEST_SUITE_P(Sqlite, JobStoreContractTest, SqliteFactory);

}  // namespace
}  // namespace ty::jobstore::testing
