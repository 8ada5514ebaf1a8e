// bench/tensorboard_index runs this: writes event files of `mb` megabytes (scalars of
// 8 tags, as a trainer logging every step would), then times the daemon's indexer
// (tensorboard::IndexOnce into a file-backed store, CRCs checked, points stored) and,
// in the same run, reading the same files with Python's protobuf (framing split,
// every Event parsed, its scalars taken; no CRC check, no store): MB/s of each.
//
// usage: tensorboard_index_time DIR [MB]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/subprocess.h"
#include "tensorboard/event_decoder.h"
#include "tensorboard/indexer.h"
#include "tensorboard/record_reader.h"
#include "tensorboard/store.h"

namespace {

namespace fs = std::filesystem;
namespace tb = ty::tensorboard;

constexpr char kPythonReader[] = R"PY(
import struct, sys
sys.path.insert(0, sys.argv[2])
import event_pb2
points = 0
for path in sys.argv[3:]:
    data = open(path, "rb").read()
    at = 0
    while at + 12 <= len(data):
        n = struct.unpack_from("<Q", data, at)[0]
        event = event_pb2.Event.FromString(data[at + 12:at + 12 + n])
        for v in event.summary.value:
            if v.WhichOneof("value") == "simple_value":
                points += 1
        at += 16 + n
print(points)
)PY";

uint64_t WriteFiles(const fs::path& logs, uint64_t bytes_wanted, std::vector<std::string>* files) {
  uint64_t bytes = 0;
  for (int run = 0; bytes < bytes_wanted; ++run) {
    const fs::path dir = logs / ("run" + std::to_string(run));
    fs::create_directories(dir);
    const fs::path file = dir / "events.out.tfevents.1.bench";
    std::ofstream out(file, std::ios::binary);
    for (int step = 0; step < 20000 && bytes < bytes_wanted; ++step) {
      for (int tag = 0; tag < 8; ++tag) {
        std::string record = tb::FrameRecord(tb::EncodeScalarEvent(
            "metric_" + std::to_string(tag), step, 1.7e9 + step, 1.0f / (step + tag + 1)));
        bytes += record.size();
        out << record;
      }
    }
    files->push_back(file.string());
  }
  return bytes;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [MB]\n", argv[0]);
    return 2;
  }
  const fs::path dir = argv[1];
  const uint64_t mb = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 64;
  std::vector<std::string> files;
  const uint64_t bytes = WriteFiles(dir / "bucket" / "logs", mb << 20, &files);
  auto store = tb::Store::Open((dir / "tensorboards.db").string(), ty::SystemClock::Get());
  if (!store.ok()) return 1;
  tb::Tensorboard board;
  board.path = {"p", "l", "", "", "", ""};
  board.display_name = "bench";
  tb::IndexTarget target;
  target.experiment = (*store)->CreateTensorboard(board)->path;
  target.experiment.experiment = "bench";
  target.bucket_root = dir.string();
  target.log_dir = "bucket/logs";
  tb::IndexBudget budget;
  budget.max_bytes = budget.max_bytes_per_file = bytes + 1;
  auto start = std::chrono::steady_clock::now();
  ty::Result<tb::IndexStats> stats = tb::IndexOnce(store->get(), target, budget);
  const double ours = Seconds(start);
  if (!stats.ok()) {
    std::fprintf(stderr, "%s\n", stats.status().ToString().c_str());
    return 1;
  }
  // Python's protobuf over the same files, with protoc's Python code for the same .proto.
  std::vector<std::string> cmd = {"protoc", "--python_out=" + dir.string(), "-I",
                                  std::string(TY_SOURCE_DIR) + "/proto",
                                  std::string(TY_SOURCE_DIR) + "/proto/tensorboard/event.proto"};
  ty::Result<ty::CommandOutput> compiled = ty::RunCommand(cmd);
  if (!compiled.ok() || compiled->exit_code != 0) return 1;
  std::vector<std::string> py = {"/usr/bin/python3", "-c", kPythonReader, "x",
                                 (dir / "tensorboard").string()};
  py.insert(py.end(), files.begin(), files.end());
  start = std::chrono::steady_clock::now();
  ty::CommandOptions long_run;
  long_run.timeout = 600LL * 1000000;
  ty::Result<ty::CommandOutput> python = ty::RunCommand(py, long_run);
  const double theirs = Seconds(start);
  if (!python.ok() || python->exit_code != 0) {
    std::fprintf(stderr, "python reader failed: %s\n", python.ok() ? python->err.c_str() : "");
    return 1;
  }
  const double mbytes = static_cast<double>(bytes) / (1 << 20);
  std::printf("event files: %.1f MB in %zu files, %llu scalars\n", mbytes, files.size(),
              static_cast<unsigned long long>(stats->points));
  std::printf("trainyard indexer (CRC-checked, stored in SQLite): %.2f s, %.1f MB/s\n", ours,
              mbytes / ours);
  std::printf("python protobuf read (parse only, nothing stored): %.2f s, %.1f MB/s (%s points)\n",
              theirs, mbytes / theirs, ty::LastLine(python->out).c_str());
  std::printf("ratio indexer/python: %.2f\n", (mbytes / ours) / (mbytes / theirs));
  return 0;
}
