# Sourced by scripts/test and scripts/test-sanitizers (set STEP_PREFIX first).
# `step CMD ARGS…` runs CMD and says how long it took, so CI's log shows where the run's
# time goes; with TRAINYARD_STEP_TIMES set, the figure is also appended there (.ci/run
# prints them all last, since only the tail of CI's log is kept). A SANITIZER in the
# step's environment is part of its label.
step() {
  local started=$SECONDS took
  "$@"
  took=$((SECONDS - started))
  echo "$STEP_PREFIX: $* took $took s"
  if [ -n "${TRAINYARD_STEP_TIMES:-}" ]; then
    echo "$STEP_PREFIX: $(basename "$1")${SANITIZER:+ $SANITIZER} $took s" >>"$TRAINYARD_STEP_TIMES"
  fi
}
