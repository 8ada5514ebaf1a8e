// A trial's trainer for tuning tests: a shell script run as `sh -c SCRIPT trainer
// ARGS...` in the test image, reporting as cloudml-hypertune does.
#pragma once

namespace ty::testing {

// The trainer: reads --x=, --n= and --opt= as argparse would, writes the metric
// `accuracy` = x (+1 with opt=b) in cloudml-hypertune's format to the file the
// service names (and a line of garbage after it with GARBAGE set), and prints what
// it saw.
constexpr char kTrainer[] = R"SH(
x=0; n=0; opt=a
for a in "$@"; do
  case "$a" in --x=*) x="${a#--x=}";; --n=*) n="${a#--n=}";; --opt=*) opt="${a#--opt=}";; esac
done
echo "trial $CLOUD_ML_TRIAL_ID tag $CLOUD_ML_HP_METRIC_TAG x=$x n=$n opt=$opt"
sleep "${SLEEP:-0}"
[ "$opt" = b ] && x=$(awk "BEGIN{print $x + 1}")
[ -n "$NO_METRIC" ] && exit 0
mkdir -p "$(dirname "$CLOUD_ML_HP_METRIC_FILE")"
echo "{\"accuracy\": \"$x\", \"checkpoint_path\": \"\", \"global_step\": \"$n\", \"timestamp\": $(date +%s), \"trial\": \"$CLOUD_ML_TRIAL_ID\"}" > "$CLOUD_ML_HP_METRIC_FILE"
if [ -n "$GARBAGE" ]; then echo "not a report" >> "$CLOUD_ML_HP_METRIC_FILE"; fi
)SH";

}  // namespace ty::testing
