#!/usr/bin/env bash
# slurm/sweep.sbatch for real, on this machine: a one-node SLURM (Debian's slurm-wlm, munge) on 127.0.0.1, then
#   1. sbatch slurm/sweep.sbatch sweeps/nm_weight.py --quick: the job ends COMPLETED with the sweep's table, and
#      every trial run is FINISHED in the sweep's MLflow store;
#   2. the same sweep with longer trials (--max-steps 200) in a job whose time runs out mid-sweep (--time=6, USR1
#      120 s before the limit): the job requeues itself, its later runs resume, and it ends COMPLETED with each
#      (configuration, seed) run once.
# Run as root (`make slurm-smoke`): the set-up below, each part skipped when done, installs slurm-wlm and munge,
# writes /etc/slurm/slurm.conf (only where none is, or where this script wrote it; a machine's own SLURM is used as
# it is) and starts munged, slurmctld and slurmd (ProctrackType=proctrack/linuxproc, TaskPlugin=task/none: no
# cgroups needed).
# The jobs run as root, Ray with token authentication (slurm/sweep.sbatch), each on ports of its own.
# Environment: STATE_DIR (/var/lib/sentsweep-slurm: SLURM's state and logs, the jobs' outputs under STATE_DIR/work),
# VENV (.venv: the jobs' Python), SWEEP_ARGS (extra options of both sweeps), CASES ("quick requeue"), MAX_WAIT
# (2400: seconds a job may take, requeues included, before it is cancelled and the test fails).
set -euo pipefail

PROJECT=$(cd "$(dirname "$0")/.." && pwd)
STATE_DIR=${STATE_DIR:-/var/lib/sentsweep-slurm}
VENV=$(cd "${VENV:-$PROJECT/.venv}" && pwd)
SWEEP_ARGS=${SWEEP_ARGS:-}
CASES=${CASES:-quick requeue}
MAX_WAIT=${MAX_WAIT:-2400}
CONF=/etc/slurm/slurm.conf
MARKER="# written by scripts/slurm_smoke.sh"
WORK=$STATE_DIR/work

step() { printf '\n=== %s (%s)\n' "$*" "$(date +%T)"; }

[ "$(id -u)" = 0 ] || { echo "run as root: it sets up munge and a SLURM (see $0)" >&2; exit 2; }

start_munge() {
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return 0
    install -d -o munge -g munge -m 755 /run/munge
    install -d -o munge -g munge -m 700 /var/lib/munge /var/log/munge /etc/munge
    [ -s /etc/munge/munge.key ] || runuser -u munge -- /usr/sbin/mungekey --create
    runuser -u munge -- /usr/sbin/munged
    sleep 1
    munge -n | unmunge >/dev/null || { echo "munge does not work: munge -n | unmunge failed" >&2; exit 1; }
}

slurm_conf() {
    local node cpus memory
    node=$(hostname -s)
    cpus=$(nproc)
    memory=$(( $(awk '/MemTotal/ { print $2 }' /proc/meminfo) / 1024 - 1024 ))
    cat <<EOF
$MARKER: a one-node SLURM on 127.0.0.1 for \`make slurm-smoke\`.
ClusterName=sentsweep
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# a requeued job waits cred_expire + 1 s before it starts again (default 120 s)
AuthInfo=cred_expire=10
StateSaveLocation=$STATE_DIR/slurmctld
SlurmdSpoolDir=$STATE_DIR/slurmd
SlurmctldPidFile=/run/sentsweep-slurmctld.pid
SlurmdPidFile=/run/sentsweep-slurmd.pid
SlurmctldLogFile=$STATE_DIR/slurmctld.log
SlurmdLogFile=$STATE_DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
KillWait=30
MinJobAge=3600
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
}

# The slurmctld and slurmd this script started (their pid files), stopped by their ids.
stop_slurm_daemons() {
    local daemon pid
    for daemon in slurmctld slurmd; do
        pid=$(cat "/run/sentsweep-$daemon.pid" 2>/dev/null) || continue
        kill "$pid" 2>/dev/null || continue
        while kill -0 "$pid" 2>/dev/null; do sleep 1; done
    done
}

slurm_answers() { scontrol ping 2>/dev/null | grep -q UP && sinfo -h -o %T 2>/dev/null | grep -qE 'idle|mixed|alloc'; }

set_up_slurm() {
    if ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
        step "set-up: apt-get install slurm-wlm munge"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
    fi
    start_munge
    if [ -f "$CONF" ] && ! grep -qF "$MARKER" "$CONF"; then
        slurm_answers && return 0  # the machine's own SLURM
        echo "$CONF exists and was not written by $0, but its SLURM does not answer (scontrol ping):" >&2
        scontrol ping >&2 || true
        exit 1
    fi
    install -d -m 755 /etc/slurm "$STATE_DIR/slurmctld" "$STATE_DIR/slurmd"
    if ! cmp -s <(slurm_conf) "$CONF"; then
        step "set-up: one-node SLURM on 127.0.0.1 ($CONF, state in $STATE_DIR)"
        slurm_conf > "$CONF"
        stop_slurm_daemons  # started with the older slurm.conf (`scontrol reconfigure` keeps some settings)
    fi
    pgrep -x slurmctld >/dev/null || /usr/sbin/slurmctld
    pgrep -x slurmd >/dev/null || /usr/sbin/slurmd
    for _ in $(seq 30); do
        sinfo -h -o %T 2>/dev/null | grep -qE 'idle|mixed|alloc' && break
        sleep 2
    done
    sinfo -h -o %T | grep -qE 'idle|mixed|alloc' || {
        echo "SLURM's node is not up:" >&2; sinfo >&2; tail -20 "$STATE_DIR"/slurm*.log >&2; exit 1; }
}

job_field() { scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# Wait until job $1 has ended (not pending, running, requeued or completing); print its final state
wait_for_job() {
    local state deadline=$(( $(date +%s) + MAX_WAIT ))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        state=$(job_field "$1" JobState)
        case $state in
            PENDING|RUNNING|REQUEUED|COMPLETING|CONFIGURING|SUSPENDED|REQUEUE_FED|REQUEUE_HOLD|RESIZING) sleep 5 ;;
            *) echo "$state"; return 0 ;;
        esac
    done
    scancel "$1"
    echo "TIMED_OUT_AFTER_${MAX_WAIT}s"
}

# The trial runs of the sweep in the SQLite store $1: all FINISHED, each (configuration, seed) once.
check_mlflow() {
    "$VENV/bin/python" - "$1" <<'EOF'
import collections
import sys

from mlflow.tracking import MlflowClient

client = MlflowClient(sys.argv[1])
experiment = client.get_experiment_by_name("nm_weight")
runs = client.search_runs([experiment.experiment_id], max_results=1000)
sweeps = [run for run in runs if "mlflow.parentRunId" not in run.data.tags]
assert len(sweeps) == 1, f"expected one sweep (parent) run, found {len(sweeps)}"
trials = [run for run in runs if run.data.tags.get("mlflow.parentRunId") == sweeps[0].info.run_id]
statuses = collections.Counter(run.info.status for run in trials)
per_point = collections.Counter(
    (run.data.params.get("stage"), run.data.params["method"], run.data.params.get("w"),
     run.data.params.get("pooling"), run.data.params["seed"]) for run in trials)
print(f"MLflow {sys.argv[1]}: sweep run {sweeps[0].info.status}, {len(trials)} trial runs, "
      f"{statuses['FINISHED']} FINISHED ({dict(statuses)}); (configuration, seed) points {len(per_point)}, "
      f"runs per point: {sorted(set(per_point.values()))}")
assert sweeps[0].info.status == "FINISHED" and trials and statuses["FINISHED"] == len(trials), "unfinished runs"
assert set(per_point.values()) == {1}, f"points run more than once: {[k for k, v in per_point.items() if v > 1]}"
EOF
}

# sbatch of the quick NM sweep, case $1, sweep options $2 (and SWEEP_ARGS), sbatch options "$3...". Prints the job's
# output, checks MLflow.
run_case() {
    local name=$1 sweep_args="$2 $SWEEP_ARGS" job state output=$WORK/$1
    shift 2
    mkdir -p "$output"
    step "sbatch $* slurm/sweep.sbatch sweeps/nm_weight.py --quick $sweep_args"
    # shellcheck disable=SC2086  # the sweep's options, split into words
    job=$(cd "$PROJECT" && SENTSWEEP_VENV=$VENV SENTSWEEP_OUTPUT_DIR=$output \
          sbatch --parsable --output="$output/job.out" "$@" slurm/sweep.sbatch sweeps/nm_weight.py --quick $sweep_args)
    echo "job $job"
    state=$(wait_for_job "$job")
    step "job $job ended $state after $(job_field "$job" Restarts) requeue(s); its output ($output/job.out):"
    cat "$output/job.out"
    [ "$state" = COMPLETED ] || { echo "$name: job $job ended $state" >&2; exit 1; }
    grep -q "| mlm+nm | 0.01 | cls |" "$output/job.out" || { echo "$name: no table in the job's output" >&2; exit 1; }
    step "$name: the runs in the sweep's MLflow store"
    check_mlflow "sqlite:///$output/mlflow.db"
    REQUEUES=$(job_field "$job" Restarts)
}

set_up_slurm
sinfo
rm -rf "$WORK"
start=$(date +%s)
for name in $CASES; do
    case $name in
        quick) run_case quick "" --time=30 ;;
        requeue)
            # USR1 180 to 240 s into each run (SLURM may send it up to 60 s early); trials 5 times as long as
            # --quick's make the sweep some 5 minutes here: the first run stops mid-sweep, later ones resume it
            run_case requeue "--max-steps 200 --eval-steps 50" --time=6 --signal=B:USR1@120
            grep -q "requeueing job" "$WORK/requeue/job.out" && [ "$REQUEUES" -ge 1 ] \
                || { echo "requeue: the job was not requeued" >&2; exit 1; }
            ;;
        *) echo "unknown case $name (CASES: quick requeue)" >&2; exit 2 ;;
    esac
done
echo "slurm smoke test passed in $(( $(date +%s) - start )) s"
