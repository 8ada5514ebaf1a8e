#!/bin/bash
# Issue 31 items 1-2 for real: the data directory on a 64 MiB tmpfs, a replica fills it
# through its bucket, writes 3,000 lines while the disk is full and exits, and the host
# frees the space. A second job of the project waits in the queue behind it (quota: one
# job at a time). Without a restart the first job must end SUCCEEDED with every line in
# its log once and no malformed record, the queued one must then run and succeed, and
# the daemon's own log must not grow by a line per lost line; while the disk is below
# its reserve /healthz is degraded and a submit is a 429. With MODE `restart` the daemon
# is killed (-9) and started again while the disk is full, before the space comes back.
# On d2135ab lines were lost (each failure two daemon log lines, 5,948 here) and the
# queued job stayed QUEUED. Prints the time from the space freed to the queue moving.
# Needs root (mount) and the busybox test image; says why and passes otherwise.
set -euo pipefail
bin=${1:?usage: $0 BIN_DIR [restart]}
mode=${2:-}
image=localhost/trainyard/busybox:latest
[ "$(id -u)" = 0 ] || { echo "full_disk: skipped (needs root to mount a tmpfs)"; exit 0; }
podman image exists "$image" || { echo "full_disk: skipped ($image missing)"; exit 0; }
work=$(mktemp -d /tmp/ty-full-disk.XXXXXX)
daemon=""
cleanup() {
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  umount "$work/data" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; tail -20 "$work/daemon.log" >&2 || true; exit 1; }
mkdir -p "$work/data"
mount -t tmpfs -o size=64m tmpfs "$work/data"
echo 'quotas: {p: {jobs: 1}}' >"$work/config.yaml"
start_daemon() {
  rm -f "$work/port"
  "$bin/trainyardd" --listen 127.0.0.1:0 --port-file "$work/port" --data-dir "$work/data" \
    --registry "" --config "$work/config.yaml" >>"$work/daemon.log" 2>&1 &
  daemon=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  [ -s "$work/port" ] || fail "the daemon did not start"
  base=http://127.0.0.1:$(cat "$work/port")
  jobs=$base/v1/projects/p/locations/us-central1/customJobs
}
state_of() {
  curl -sf "$jobs/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])'
}
start_daemon
curl -sf -XPOST "$base/storage/v1/b?project=p" -d '{"name":"fill"}' >/dev/null || fail "bucket"
# The replica fills the disk only once the second job is in the queue (a submit while
# the disk is below its reserve is refused): the test leaves /gcs/fill/go for it.
script='while [ ! -e /gcs/fill/go ]; do sleep 0.05; done
dd if=/dev/zero of=/gcs/fill/big bs=1M count=100 2>/dev/null; i=0
while [ $i -lt 3000 ]; do echo line $i; i=$((i+1)); done; echo done'
body_of() {
  python3 -c 'import json,sys; print(json.dumps({"displayName":"fill","jobSpec":{"workerPoolSpecs":[{"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1","containerSpec":{"imageUri":sys.argv[1],"command":["sh","-c",sys.argv[2]]}}]}}))' "$image" "$1"
}
submit() {
  local out
  out=$(curl -s -w '\n%{http_code}' -XPOST "$jobs" -d "$(body_of "$1")")
  [ "${out##*$'\n'}" = 200 ] || fail "a submit answered: $out"
  printf '%s' "${out%$'\n'*}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["name"].split("/")[-1])'
}
body=$(body_of "$script")
job=$(submit "$script")
queued=$(submit "echo queued")
touch "$work/data/buckets/fill/go"
for _ in $(seq 100); do
  [ "$(df --output=avail "$work/data" | tail -1 | tr -d ' ')" -lt 1024 ] && break
  sleep 0.1
done
sleep 3  # The lines are written while the disk is full, and the replica exits.
health=$(curl -s "$base/healthz")
case $health in *'"degraded"'*dataDisk* | *dataDisk*'"degraded"'*) ;; *) fail "healthz while full: $health" ;; esac
code=$(curl -s -o /dev/null -w '%{http_code}' -XPOST "$jobs" -d "$body")
[ "$code" = 429 ] || fail "a submit while full answered $code"
[ "$(state_of "$queued")" = JOB_STATE_QUEUED ] || fail "the second job did not wait in the queue"
if [ "$mode" = restart ]; then
  kill -9 "$daemon"
  wait "$daemon" 2>/dev/null || true
  start_daemon
  health=$(curl -s "$base/healthz")
  case $health in *'"degraded"'*) ;; *) fail "healthz after a restart while full: $health" ;; esac
fi
freed=$(date +%s.%N)
rm -f "$work/data/buckets/fill/big"
moved=""
for _ in $(seq 600); do
  s=$(state_of "$queued")
  [ -z "$moved" ] && [ "$s" != JOB_STATE_QUEUED ] && moved=$(date +%s.%N)
  [ "$s" = JOB_STATE_SUCCEEDED ] && break
  sleep 0.05
done
[ -n "$moved" ] || fail "the queued job never left the queue after the space came back"
[ "$(state_of "$queued")" = JOB_STATE_SUCCEEDED ] || fail "the queued job is $(state_of "$queued")"
state=$(state_of "$job")
[ "$state" = JOB_STATE_SUCCEEDED ] || fail "the job is $state after the space came back"
health=$(curl -s "$base/healthz")
[ "$health" = '{"status":"ok"}' ] || fail "healthz after: $health"
log=$work/data/logs/$job.ndjson
python3 - "$log" <<'CHECK' || fail "the job's log"
import json, sys
lines, done = [], 0
for raw in open(sys.argv[1]):
    entry = json.loads(raw)  # Every record whole.
    msg = entry.get("msg", "")
    if msg.startswith("line "):
        lines.append(int(msg[5:]))
    done += msg == "done"
assert sorted(lines) == list(range(3000)), "missing or repeated: %d lines, %d distinct" % (len(lines), len(set(lines)))
assert done == 1, done
CHECK
said=$(wc -l <"$work/daemon.log")
[ "$said" -lt 100 ] || fail "the daemon wrote $said log lines"
wait_s=$(python3 -c "print('%.2f' % ($moved - $freed))")
echo "full_disk${mode:+ ($mode)}: the job SUCCEEDED with its 3,000 lines once each after the space came back, the queued job ran ${wait_s} s after the space was freed; $said daemon log lines: ok"
