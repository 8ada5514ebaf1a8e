#!/bin/bash
# scripts/slurm-cluster for real (issue 21 item 6): three hosts come up idle; a
# heterogeneous job of three components lands one component per host (what a
# chief/worker/ps job needs: Slurm starts no het job on a single node); a job's exit
# code comes back; `down` leaves no daemon, namespace or bridge behind.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cluster=$repo/scripts/slurm-cluster
work=$(mktemp -d /tmp/ty-slurm-test.XXXXXX)
fail() { echo "FAIL: $*" >&2; "$cluster" down >/dev/null 2>&1 || true; exit 1; }
trap '"$cluster" down >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

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
echo "slurm-cluster: 3 hosts up, a het job one component per host, exit codes, down clean: ok"
