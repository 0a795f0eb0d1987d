#!/usr/bin/env bash
# slurm/sweep.sbatch for real, on this machine: a one-node SLURM (Debian's slurm-wlm, munge) on 127.0.0.1, then the
# cases below, each a job of the quick NM sweep. After every job nothing of it may be left on the node (no
# /tmp/ray-JOBID, no process with its SLURM_JOB_ID); a table of the cases ends the output.
#   quick        sbatch slurm/sweep.sbatch sweeps/nm_weight.py --quick: the job ends COMPLETED with the sweep's
#                table, and every trial run is FINISHED in the sweep's MLflow store. Its runs' seconds per step,
#                measured on this machine, size the next case.
#   requeue      the same sweep in a job whose time runs out mid-sweep (USR1 120 s before the limit): its time limit
#                and its trials' length derived from the quick case's measures (`size_requeue_case`: its startup
#                and its seconds per step), so that each run trains for a while and the trials' steps alone outlast
#                the time to the signal: the job requeues itself, its later runs resume, and it ends COMPLETED with
#                each (configuration, seed) run once.
#   cancel       a plain `scancel` mid-sweep, once a trial runs (trials of about 20 s at the quick case's speed,
#                `mid_trial_options`): the job ends CANCELLED.
#   kill         the driver killed with `kill -9` mid-sweep (trials as cancel's): the job ends FAILED, its log ends
#                with the line that resumes it (sbatch with the options it was submitted with), and that line, run
#                as printed, finishes the sweep with each (configuration, seed) run once.
#   credentials  MLFLOW_TRACKING_URI=http://alice:PASSWORD@127.0.0.1:A_CLOSED_PORT: the driver refuses it naming the
#                real problem (the job FAILED, exit code 2), and the password is nowhere in the job's log.
# Run as root (`make slurm-smoke`): the set-up below, each part skipped when done, installs slurm-wlm and munge,
# writes /etc/slurm/slurm.conf (only where none is, or where this script wrote it; a machine's own SLURM is used as
# it is) and starts munged, slurmctld and slurmd (ProctrackType=proctrack/linuxproc, TaskPlugin=task/none: no
# cgroups needed).
# The jobs run as root, Ray with token authentication (slurm/sweep.sbatch), each on ports of its own.
# Environment: STATE_DIR (/var/lib/sentsweep-slurm: SLURM's state and logs, the jobs' outputs under STATE_DIR/work),
# VENV (.venv: the jobs' Python), SWEEP_ARGS (extra options of every sweep), CASES ("quick requeue cancel kill
# credentials"; requeue runs quick first where CASES lacks it), MAX_WAIT (3600: seconds a job may take, requeues
# included, before it is cancelled and the test fails), REQUEUE_WINDOW (300: seconds each run of the requeue case
# trains at least before its time-limit signal).
set -euo pipefail

PROJECT=$(cd "$(dirname "$0")/.." && pwd)
STATE_DIR=${STATE_DIR:-/var/lib/sentsweep-slurm}
VENV=$(cd "${VENV:-$PROJECT/.venv}" && pwd)
SWEEP_ARGS=${SWEEP_ARGS:-}
CASES=${CASES:-quick requeue cancel kill credentials}
MAX_WAIT=${MAX_WAIT:-3600}
REQUEUE_WINDOW=${REQUEUE_WINDOW:-300}
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

# The runs of the sweep in the SQLite store $1, as sentsweep reads them (`fetch_trial_runs`: the trial runs sit under
# their configuration's run): one sweep, FINISHED, its trial runs all FINISHED, each (configuration, seed) once.
check_mlflow() {
    "$VENV/bin/python" - "$1" <<'EOF'
import collections
import sys

from mlflow.tracking import MlflowClient

from sentsweep.analysis.runs import fetch_trial_runs

client = MlflowClient(sys.argv[1])
experiment = client.get_experiment_by_name("nm_weight")
sweeps = client.search_runs([experiment.experiment_id], "tags.role = 'sweep'")
assert len(sweeps) == 1, f"expected one sweep run, found {len(sweeps)}"
trials = fetch_trial_runs(sys.argv[1], "nm_weight", sweeps[0].info.run_id)
assert len(trials) == len(fetch_trial_runs(sys.argv[1], "nm_weight")), "trial runs outside the sweep"
statuses = collections.Counter(trials["status"])
points = [tuple(trials.get(f"params.{name}", [None] * len(trials))) for name in ("stage", "method", "w", "pooling")]
per_point = collections.Counter(zip(*points, trials["seed"]))
print(f"MLflow {sys.argv[1]}: sweep run {sweeps[0].info.status}, {len(trials)} trial runs, "
      f"{statuses['FINISHED']} FINISHED ({dict(statuses)}); (configuration, seed) points {len(per_point)}, "
      f"runs per point: {sorted(set(per_point.values()))}")
assert sweeps[0].info.status == "FINISHED" and len(trials) and statuses["FINISHED"] == len(trials), "unfinished runs"
assert set(per_point.values()) == {1}, f"points run more than once: {[k for k, v in per_point.items() if v > 1]}"
EOF
}

# Nothing of job $1 left on this node: no Ray temp dir, no process with its SLURM_JOB_ID (read from each process's
# environment: a Ray worker's command line is its task's name).
leftovers() {
    local job=$1 found=() pid
    [ ! -e "/tmp/ray-$job" ] || found+=("/tmp/ray-$job")
    for pid in $(grep -lsxa --null-data "SLURM_JOB_ID=$job" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
        found+=("pid $pid ($(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-60))")
    done
    if [ "${#found[@]}" -eq 0 ]; then echo none; else (IFS=';'; echo "${found[*]}"); fi
}

# sbatch of the quick NM sweep for case $1, sweep options $2 (and SWEEP_ARGS), sbatch options "$3...": sets JOB and
# OUTPUT (the job's output folder, its log OUTPUT/job.out).
submit() {
    local name=$1 sweep_args="$2 $SWEEP_ARGS"
    shift 2
    OUTPUT=$WORK/$name
    mkdir -p "$OUTPUT"
    step "$name: sbatch $* slurm/sweep.sbatch sweeps/nm_weight.py --quick $sweep_args"
    # shellcheck disable=SC2086  # the sweep's options, split into words
    JOB=$(cd "$PROJECT" && SENTSWEEP_VENV=$VENV SENTSWEEP_OUTPUT_DIR=$OUTPUT \
          sbatch --parsable --output="$OUTPUT/job.out" "$@" slurm/sweep.sbatch sweeps/nm_weight.py --quick $sweep_args)
    echo "job $JOB"
}

# Wait for job JOB of case $1 to end, print its log, check that it ended $2 and left nothing on the node, and add
# its row to the table ($3: when the case started). Sets STATE, REQUEUES.
finish() {
    local name=$1 expected=$2 started=$3 left
    STATE=$(wait_for_job "$JOB")
    REQUEUES=$(job_field "$JOB" Restarts)
    sleep 2  # the job's last processes reaped
    left=$(leftovers "$JOB")
    step "$name: job $JOB ended $STATE after $REQUEUES requeue(s); left on the node: $left; its log ($OUTPUT/job.out):"
    cat "$OUTPUT/job.out"
    ROWS+=("| $name | $JOB | $STATE | $REQUEUES | $left | $(( $(date +%s) - started )) s |")
    [ "$STATE" = "$expected" ] || { echo "$name: job $JOB ended $STATE, not $expected" >&2; exit 1; }
    [ "$left" = none ] || { echo "$name: job $JOB left $left" >&2; exit 1; }
}

# Wait until the sweep of job JOB has trials running (its progress line says so); fail at once if the job ends
# first (its sweep was over before a progress line showed a trial running: its trials were too short).
wait_for_trials() {
    local deadline=$(( $(date +%s) + MAX_WAIT ))
    until grep -qE "trials ended .*, [1-9][0-9]* running" "$OUTPUT/job.out" 2>/dev/null; do
        [ "$(date +%s)" -lt "$deadline" ] || { echo "job $JOB: no trial started" >&2; scancel "$JOB"; exit 1; }
        case $(job_field "$JOB" JobState) in
            PENDING|RUNNING|CONFIGURING) ;;
            *) echo "job $JOB ended $(job_field "$JOB" JobState) before a trial was seen running" >&2; exit 1 ;;
        esac
        sleep 2
    done
}

# "SECONDS_PER_STEP TRIALS STARTUP" of the quick case (job $1): the median seconds per step of its trial runs, how
# many there are, and the seconds from the job's start to its first trial's (Ray's start, the driver's checks).
measured_speed() {
    "$VENV/bin/python" - "sqlite:///$WORK/quick/mlflow.db" "$(job_field "$1" StartTime)" <<'EOF'
import datetime
import statistics
import sys

from mlflow.tracking import MlflowClient

from sentsweep.analysis.runs import fetch_trial_runs

trials = fetch_trial_runs(sys.argv[1], "nm_weight")
client = MlflowClient(sys.argv[1])
job_start = datetime.datetime.fromisoformat(sys.argv[2]).timestamp()  # SLURM writes the local time
startup = min(client.get_run(run_id).info.start_time for run_id in trials["run_id"]) / 1000 - job_start
print(statistics.median(trials["metrics.system/seconds_per_step"]), len(trials), round(startup))
EOF
}

# SWEEP_OPTIONS of a case stopped mid-trial (cancel, kill): trials of about $1 seconds each at the quick case's
# measured seconds per step, evaluated 4 times, and a progress line every 2 s, so that a trial is seen running
# (the quick sweep's own 20-step trials end within its first progress interval).
mid_trial_options() {
    local steps
    steps=$("$VENV/bin/python" -c "import math; print(math.ceil($1 / $QUICK_SPEED))")
    echo "--max-steps $steps --eval-steps $(( (steps + 3) / 4 )) --progress-interval 2"
}

# The requeue case sized from the quick case's measures (QUICK_*) and the signal's lead $1 (seconds): sets
# LIMIT (minutes) and STEPS (per trial).
# - LIMIT: each run must train for REQUEUE_WINDOW seconds at least after the job's startup (Ray's start, the
#   driver's checks: the quick case's) and before the signal, which SLURM sends up to 60 s before the time it is
#   asked for: LIMIT = startup + window + 60 + lead, in minutes.
# - STEPS: the trials' steps alone (at the measured seconds per step, as many trials at once as the node has CPUs,
#   one each) take 1.5 times the time from the startup to the latest signal (LIMIT - lead - startup): the sweep is
#   still running when the signal comes however much faster the steps go than measured, up to 1.5 times, so the
#   job must requeue itself, and the next runs finish it.
size_requeue_case() {
    local lead=$1 speed=$QUICK_SPEED trials=$QUICK_TRIALS startup=$QUICK_STARTUP slots
    slots=$(nproc)
    LIMIT=$(( (startup + REQUEUE_WINDOW + 60 + lead + 59) / 60 ))
    STEPS=$("$VENV/bin/python" -c "import math
print(math.ceil(1.5 * ($LIMIT * 60 - $lead - $startup) * $slots / ($trials * $speed)))")
    echo "requeue case: the quick case's $trials trials took $speed s per step, $slots at a time, and started" \
         "$startup s into the job: --time=$LIMIT (each run trains ${REQUEUE_WINDOW}+ s before the signal)," \
         "$STEPS steps per trial (their steps alone take 1.5 x the $(( LIMIT * 60 - lead - startup )) s from the" \
         "startup to the signal)"
}

set_up_slurm
sinfo
rm -rf "$WORK"
start=$(date +%s)
ROWS=()
# the requeue, cancel and kill cases are sized on the quick case's speed
[[ " $CASES " == *" quick "* || ! " $CASES " =~ \ (requeue|cancel|kill)\  ]] || CASES="quick $CASES"
for name in $CASES; do
    case_started=$(date +%s)
    case $name in
        quick)
            submit quick "" --time=30
            finish quick COMPLETED "$case_started"
            grep -q "| mlm+nm | 0.01 | cls |" "$OUTPUT/job.out" || { echo "quick: no table in its log" >&2; exit 1; }
            check_mlflow "sqlite:///$OUTPUT/mlflow.db"
            # what the later cases are sized on, measured once
            read -r QUICK_SPEED QUICK_TRIALS QUICK_STARTUP < <(measured_speed "$JOB")
            ;;
        requeue)
            size_requeue_case 120
            submit requeue "--max-steps $STEPS --eval-steps $(( (STEPS + 3) / 4 ))" --time="$LIMIT" \
                --signal=B:USR1@120
            finish requeue COMPLETED "$case_started"
            grep -q "requeueing job" "$OUTPUT/job.out" && [ "$REQUEUES" -ge 1 ] \
                || { echo "requeue: the job was not requeued" >&2; exit 1; }
            check_mlflow "sqlite:///$OUTPUT/mlflow.db"
            ;;
        cancel)
            submit cancel "$(mid_trial_options 20)" --time=30
            wait_for_trials
            scancel "$JOB"
            finish cancel CANCELLED "$case_started"
            ;;
        kill)
            submit kill "$(mid_trial_options 20)" --time=30 --job-name=smoke-kill
            wait_for_trials
            driver=$(pgrep -f -- "--output-dir $OUTPUT " | head -1)  # the job's driver: its output folder is its own
            kill -KILL "$driver"
            finish kill FAILED "$case_started"
            resume=$(grep -A1 "resume it with:" "$OUTPUT/job.out" | tail -1 | sed 's/^ *//')
            [[ $resume == *"sbatch --nodes=1 --time=00:30:00 "*"--job-name=smoke-kill"*" slurm/sweep.sbatch sweeps/nm_weight.py --quick --max-steps "*" --resume"* ]] \
                || { echo "kill: the printed resume line lacks the job's options: $resume" >&2; exit 1; }
            step "kill: the printed resume line, run as printed (its log appended to $OUTPUT/job.out): $resume"
            # shellcheck disable=SC2086  # the printed line's words, as a shell would split them
            JOB=$(cd "$PROJECT" && eval "SENTSWEEP_VENV=$VENV ${resume/ sbatch / sbatch --parsable --output=$OUTPUT/job.out }")
            echo "job $JOB"
            finish kill-resumed COMPLETED "$case_started"
            check_mlflow "sqlite:///$OUTPUT/mlflow.db"
            ;;
        credentials)
            port=$("$VENV/bin/python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
            MLFLOW_TRACKING_URI="http://alice:s3cret-pw@127.0.0.1:$port" submit credentials "" --time=10
            finish credentials FAILED "$case_started"
            grep -q "MLflow tracking server http://127.0.0.1:$port is unreachable" "$OUTPUT/job.out" \
                || { echo "credentials: the refusal does not name the real problem" >&2; exit 1; }
            if grep -q "s3cret-pw" "$OUTPUT/job.out"; then echo "credentials: the password is in the job's log" >&2; exit 1; fi
            ;;
        *) echo "unknown case $name (CASES: quick requeue cancel kill credentials)" >&2; exit 2 ;;
    esac
done
step "slurm smoke test passed in $(( $(date +%s) - start )) s"
echo "| case | job | state | requeues | left on the node | seconds |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
