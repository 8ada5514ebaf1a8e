#!/bin/bash
# scripts/slurm-cluster for real (issue 21 item 6): three hosts come up idle; a
# heterogeneous job of three components lands one component per host (what a
# chief/worker/ps job needs: Slurm starts no het job on a single node); a job's exit
# code comes back; every task of a 1 chief + 2 workers + 1 ps job works out the same
# placement with ty-slurm-launch (given as $1), its own on its own host; an image in
# trainyardd's registry on the controller's address, behind tokens, pulls on a host by
# its gcr.io name with a token and not without;
# `down` leaves no daemon, namespace or bridge behind.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cluster=$repo/scripts/slurm-cluster
work=$(mktemp -d /tmp/ty-slurm-test.XXXXXX)
fail() { echo "FAIL: $*" >&2; "$cluster" down >/dev/null 2>&1 || true; exit 1; }
daemon=""
cleanup() {
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  "$cluster" down >/dev/null 2>&1 || true
  podman --root "$work/store" --runroot "$work/run" rmi -af >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

eval "$("$cluster" up 3)"
[ "$(sinfo -h -N -o %T | sort -u)" = idle ] || fail "hosts not idle: $(sinfo -N)"

cat >"$work/het.sh" <<'SCRIPT'
#!/bin/sh
srun --het-group=0-2 sh -c 'echo "$SLURM_PROCID $(hostname)"'
SCRIPT
# -W waits for the end; each component one task on a host of its own.
sbatch -W -o "$work/het.out" -J ty-het -n1 : -n1 : -n1 "$work/het.sh" >/dev/null ||
  fail "het job failed: $(cat "$work/het.out" 2>/dev/null)"
hosts=$(awk '{print $2}' "$work/het.out" | sort -u | tr '\n' ' ')
[ "$hosts" = "n1 n2 n3 " ] || fail "components not one per host: $(cat "$work/het.out")"
ranks=$(awk '{print $1}' "$work/het.out" | sort | tr '\n' ' ')
[ "$ranks" = "0 1 2 " ] || fail "ranks: $(cat "$work/het.out")"

launch=${1:?usage: $0 PATH/ty-slurm-launch}
cat >"$work/topology.sh" <<SCRIPT
#!/bin/sh
export TY_SLURM_POOLS=0:1,1:2,2:1
srun --resv-ports=4 --het-group=0-2 sh -c 'echo "\$(hostname) \$($launch --print-topology)"'
SCRIPT
sbatch -W -o "$work/topology.out" -J ty-topology -n1 : -n2 : -n1 "$work/topology.sh" >/dev/null ||
  fail "topology job failed: $(cat "$work/topology.out")"
python3 - "$work/topology.out" <<'CHECK' || fail "placements disagree: $(cat "$work/topology.out")"
import json, sys
rows = [line.split(" ", 1) for line in open(sys.argv[1]) if line.strip()]
tasks = [(host, json.loads(text)) for host, text in rows]
assert len(tasks) == 4, tasks
clusters = {json.dumps(t["cluster"]) for _, t in tasks}
assert len(clusters) == 1, clusters  # Every task the same map.
cluster = tasks[0][1]["cluster"]
assert [len(p) for p in cluster] == [1, 2, 1], cluster
assert sorted((t["pool"], t["index"]) for _, t in tasks) == [(0, 0), (1, 0), (1, 1), (2, 0)]
addresses = [a for pool in cluster for a in pool]
assert len(set(addresses)) == 4, addresses
for host, t in tasks:  # Its own address is on its own host, at its port.
    assert cluster[t["pool"]][t["index"]] == "%s:%d" % (host, t["port"]), (host, t)
CHECK

# The registry from every host: trainyardd serving it on the controller's address
# with tokens (an open one beyond loopback is refused), listening where the hosts reach
# its token service; an image pushed with an editor's token, then read and pulled on
# the hosts by its gcr.io name with a token, and refused without one.
bin=$(dirname "$launch")
token=slurm-cluster-editor-token-0123456789
cat >"$work/config.yaml" <<CONFIG
tokens:
  - name: editor
    sha256: $(printf %s "$token" | sha256sum | cut -d' ' -f1)
    role: editor
    projects: [slurmtest]
CONFIG
"$bin/trainyardd" --listen 0.0.0.0:0 --port-file "$work/port" --data-dir "$work/data" \
  --config "$work/config.yaml" --registry 10.201.0.1:80 >"$work/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do
  code=$(curl -s -o /dev/null -w '%{http_code}' --noproxy '*' http://10.201.0.1/v2/ || true)
  [ "$code" = 401 ] && break
  sleep 0.1
done
[ "$code" = 401 ] || fail "the registry does not ask for a token: $code $(cat "$work/daemon.log")"
image=localhost/trainyard/busybox:latest
podman tag "$image" 10.201.0.1:80/slurmtest/bb:1
podman push -q --tls-verify=false 10.201.0.1:80/slurmtest/bb:1 >/dev/null 2>&1 &&
  fail "a push without a token went through"
podman push -q --tls-verify=false --creds "oauth2accesstoken:$token" \
  10.201.0.1:80/slurmtest/bb:1 ||
  fail "push: $(cat "$work/daemon.log" "$work/data/registry/registry.log")"
podman rmi 10.201.0.1:80/slurmtest/bb:1 >/dev/null
code=$(srun -w n3 curl -s -o /dev/null -w '%{http_code}' --noproxy '*' \
  http://gcr.io/v2/slurmtest/bb/tags/list) || fail "n3 does not reach gcr.io's stand-in"
[ "$code" = 401 ] || fail "tags on n3 without a token: $code"
srun -w n2 podman --root "$work/store" --runroot "$work/run" pull -q gcr.io/slurmtest/bb:1 \
  >/dev/null 2>&1 && fail "n2 pulled without a token"
srun -w n2 podman --root "$work/store" --runroot "$work/run" pull -q \
  --creds "oauth2accesstoken:$token" gcr.io/slurmtest/bb:1 >/dev/null ||
  fail "n2 cannot pull gcr.io/slurmtest/bb:1 with a token"

set +e
sbatch -W -o /dev/null -J ty-exit --wrap 'exit 3' >/dev/null
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "exit 3 came back as $rc"

"$cluster" down
pgrep -r R,S,D -x slurmd >/dev/null && fail "a slurmd outlived down"
pgrep -r R,S,D -x slurmctld >/dev/null && fail "slurmctld outlived down"
ip netns list | grep -q '^ty-slurm-n' && fail "namespaces left: $(ip netns list)"
ip link show tyslurm0 >/dev/null 2>&1 && fail "the bridge is left"
echo "slurm-cluster: 3 hosts up, a het job one component per host, every task the same placement, the registry by gcr.io names on the hosts with tokens only, exit codes, down clean: ok"
