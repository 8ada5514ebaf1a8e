// The metrics file a trial's replica writes (cloudml-hypertune's format): the daemon
// reads whatever a replica put there.
#include "fuzz/fuzz_input.h"
#include "tuning/hypertune_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)ty::tuning::ParseMetricsFile(ty::fuzz::Text(data, size), "training/hptuning/metric");
  return 0;
}
