#include "tensorboard/store.h"

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"

namespace ty::tensorboard {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = Open({}); }
  std::unique_ptr<Store> Open(Limits limits) {
    auto s = Store::Open(":memory:", &clock_, limits);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return std::move(*s);
  }
  Tensorboard MakeTensorboard(Store* store, const std::string& project = "p") {
    Tensorboard t;
    t.path.project = project;
    t.path.location = "us-central1";
    t.display_name = "board";
    Result<Tensorboard> made = store->CreateTensorboard(t);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return *made;
  }
  static IndexBatch Batch(const ResourcePath& tb, const std::string& run,
                          std::vector<ScalarPoint> points) {
    IndexBatch b;
    b.experiment = tb.Tensorboard();
    b.experiment.experiment = "123";
    b.experiment_display_name = "job 123";
    b.runs.push_back({run, run, std::move(points)});
    b.files.push_back({"123//" + run + "/events", 100, 0, false});
    return b;
  }
  ty::testing::ManualClock clock_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, ATensorboardIsCreatedListedUpdatedAndDeleted) {
  Tensorboard t = MakeTensorboard(store_.get());
  EXPECT_EQ(t.path.name(), "projects/p/locations/us-central1/tensorboards/1");
  Tensorboard second = MakeTensorboard(store_.get());
  Result<Page<Tensorboard>> page = store_->ListTensorboards("p", "us-central1", {1, ""});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->next_page_token, "1");
  page = store_->ListTensorboards("p", "us-central1", {1, page->next_page_token});
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].path.tensorboard, second.path.tensorboard);
  EXPECT_TRUE(page->next_page_token.empty());

  t.display_name = "renamed";
  t.description = "kept?";
  Result<Tensorboard> updated = store_->UpdateTensorboard(t, {"displayName"});
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated->display_name, "renamed");
  EXPECT_EQ(updated->description, "");
  EXPECT_EQ(store_->UpdateTensorboard(t, {"etag"}).status().code(), StatusCode::kInvalidArgument);

  ASSERT_TRUE(store_->DeleteTensorboard(t.path).ok());
  EXPECT_EQ(store_->GetTensorboard(t.path).status().code(), StatusCode::kNotFound);
}

TEST_F(StoreTest, AnotherProjectCannotReachATensorboardByItsId) {
  Tensorboard t = MakeTensorboard(store_.get(), "p");
  ResourcePath other = t.path;
  other.project = "q";
  EXPECT_EQ(store_->GetTensorboard(other).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->DeleteTensorboard(other).code(), StatusCode::kNotFound);
  other.project = "p";
  other.tensorboard = "1 OR 1=1";
  EXPECT_EQ(store_->GetTensorboard(other).status().code(), StatusCode::kNotFound);
}

TEST_F(StoreTest, ChildrenHaveVertexIdsAndAreUniqueInTheirParent) {
  Tensorboard t = MakeTensorboard(store_.get());
  Experiment e;
  e.path = t.path;
  e.path.experiment = "Bad_Id";
  EXPECT_EQ(store_->CreateExperiment(e).status().code(), StatusCode::kInvalidArgument);
  e.path.experiment = "exp-1";
  ASSERT_TRUE(store_->CreateExperiment(e).ok());
  EXPECT_EQ(store_->CreateExperiment(e).status().code(), StatusCode::kAlreadyExists);
  tensorboard::Run r;
  r.path = e.path;
  r.path.run = "run-1";
  ASSERT_TRUE(store_->CreateRun(r).ok());
  TimeSeries s;
  s.path = r.path;
  s.display_name = "loss";
  Result<TimeSeries> made = store_->CreateTimeSeries(s);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(store_->CreateTimeSeries(s).status().code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(
      store_->WritePoints(r.path, made->path.time_series, {{1, 10, 0.5}, {2, 20, 0.25}}).ok());
  Result<std::vector<Point>> points = store_->ReadPoints(made->path, {});
  ASSERT_TRUE(points.ok());
  ASSERT_EQ(points->size(), 2u);
  EXPECT_DOUBLE_EQ((*points)[1].value, 0.25);
  EXPECT_EQ(store_->GetTimeSeries(made->path)->max_step, 2);
  EXPECT_EQ(store_->GetTensorboard(t.path)->run_count, 1);
}

TEST_F(StoreTest, AnIndexBatchMakesItsExperimentRunsAndSeriesOnceEach) {
  Tensorboard t = MakeTensorboard(store_.get());
  IndexBatch b = Batch(t.path, "train", {{"loss", 1, 10, 0.9}, {"acc", 1, 10, 0.1}});
  ASSERT_TRUE(store_->ApplyIndexBatch(b).ok());
  // The same records again (a pass the daemon died in): replaced, not repeated.
  ASSERT_TRUE(store_->ApplyIndexBatch(b).ok());
  ResourcePath run = b.experiment;
  run.run = "train";
  Result<Page<TimeSeries>> series = store_->ListTimeSeries(run, {});
  ASSERT_TRUE(series.ok());
  ASSERT_EQ(series->items.size(), 2u);
  Result<std::vector<Point>> points = store_->ReadPoints(series->items[0].path, {});
  EXPECT_EQ(points->size(), 1u);
  EXPECT_EQ(store_->GetExperiment(b.experiment)->source, "trainyard");
  EXPECT_EQ(store_->GetFileState(t.path, "123//train/events")->offset, 100u);
}

TEST_F(StoreTest, LimitsDropWhatIsPastThemAndKeepTheRest) {
  auto store = Open({.runs_per_experiment = 1, .series_per_run = 1, .points_per_series = 2});
  Tensorboard t = MakeTensorboard(store.get());
  ASSERT_TRUE(store
                  ->ApplyIndexBatch(Batch(
                      t.path, "a",
                      {{"loss", 1, 0, 1}, {"acc", 1, 0, 1}, {"loss", 2, 0, 1}, {"loss", 3, 0, 1}}))
                  .ok());
  ASSERT_TRUE(store->ApplyIndexBatch(Batch(t.path, "b", {{"loss", 1, 0, 1}})).ok());
  ResourcePath exp = t.path;
  exp.experiment = "123";
  EXPECT_EQ(store->ListRuns(exp, {})->items.size(), 1u);
  exp.run = "a";
  Result<Page<TimeSeries>> series = store->ListTimeSeries(exp, {});
  ASSERT_EQ(series->items.size(), 1u);
  EXPECT_EQ(store->ReadPoints(series->items[0].path, {})->size(), 2u);
}

TEST_F(StoreTest, PointsAreReadByStepRange) {
  Tensorboard t = MakeTensorboard(store_.get());
  std::vector<ScalarPoint> points;
  for (int i = 0; i < 50; ++i) points.push_back({"loss", i, i, i * 0.5});
  ASSERT_TRUE(store_->ApplyIndexBatch(Batch(t.path, "r", points)).ok());
  ResourcePath run = t.path;
  run.experiment = "123";
  run.run = "r";
  ResourcePath series = store_->ListTimeSeries(run, {})->items[0].path;
  Result<std::vector<Point>> page = store_->ReadPoints(series, {.min_step = 10, .max_points = 5});
  ASSERT_EQ(page->size(), 5u);
  EXPECT_EQ(page->front().step, 10);
  EXPECT_EQ(page->back().step, 14);
}

TEST_F(StoreTest, ABatchForADeletedTensorboardIsNotFound) {
  Tensorboard t = MakeTensorboard(store_.get());
  ASSERT_TRUE(store_->DeleteTensorboard(t.path).ok());
  EXPECT_EQ(store_->ApplyIndexBatch(Batch(t.path, "r", {{"x", 1, 1, 1}})).code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace ty::tensorboard
