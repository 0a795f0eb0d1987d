#!/usr/bin/env bash
# The cluster launcher for real, on this machine: cluster-onprem.yaml pointed at 127.0.0.1 (its head reached over
# SSH as a dedicated user; scripts/cluster_local_config.py), then
#   ray up -y; ray submit <config> sweeps/nm_weight.py --quick; ray submit <config> examples/own_objective.py --quick
#   (a researcher's own objective, from a file the cluster's nodes do not have); the runs of both counted in the
#   head's MLflow server; Ray's token authentication checked on the head; ray down -y
# Run as root (`make cluster-smoke`): the set-up below, done once and skipped when done, installs openssh-server and
# rsync, creates the user CLUSTER_USER with an SSH key in STATE_DIR, and starts an sshd of its own that listens on
# 127.0.0.1:22 only and lets in that user only (unless something already listens there: then that sshd must).
# The cluster runs as that user, not root, because the launcher's start and teardown commands run `ray stop`,
# which stops every Ray process its user may signal: as root, every Ray on the machine.
# Environment: CLUSTER_USER (sentsweep-ray), STATE_DIR (/var/lib/sentsweep-cluster), VENV (.venv: the client's
# `ray`), MLFLOW_PORT (25000), RAY_PORT (26379), SWEEP_ARGS (extra options of the sweep), KEEP_CLUSTER=1 (no
# `ray down`, the MLflow server left running), FRESH=1 (also remove the user's venv, for a first-time set-up).
set -euo pipefail

PROJECT=$(cd "$(dirname "$0")/.." && pwd)
CLUSTER_USER=${CLUSTER_USER:-sentsweep-ray}
STATE_DIR=${STATE_DIR:-/var/lib/sentsweep-cluster}
VENV=$(cd "${VENV:-$PROJECT/.venv}" && pwd)
MLFLOW_PORT=${MLFLOW_PORT:-25000}
RAY_PORT=${RAY_PORT:-26379}
SWEEP_ARGS=${SWEEP_ARGS:-}
KEY=$STATE_DIR/id_ed25519
TOKEN=$STATE_DIR/ray_auth_token
CONFIG=$STATE_DIR/cluster-local.yaml
SSHD_CONFIG=$STATE_DIR/sshd_config
HOME_DIR=/home/$CLUSTER_USER
# The client's own Ray files (the local provider's cluster state) stay out of /tmp/ray, which other Rays use.
export RAY_TMPDIR=$STATE_DIR/client-tmp RAY_USAGE_STATS_ENABLED=0

step() { printf '\n=== %s (%s)\n' "$*" "$(date +%T)"; }

[ "$(id -u)" = 0 ] || { echo "run as root: it sets up a user and an sshd (see $0)" >&2; exit 2; }

listening_on_22() { ss -ltnH 'sport = :22' 2>/dev/null | grep -qE '127\.0\.0\.1:22|0\.0\.0\.0:22|\*:22'; }

set_up_machine() {
    step "set-up: openssh-server, rsync, user $CLUSTER_USER, sshd on 127.0.0.1:22"
    if ! command -v sshd >/dev/null && [ ! -x /usr/sbin/sshd ] || ! command -v rsync >/dev/null; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server rsync >/dev/null
    fi
    id "$CLUSTER_USER" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$CLUSTER_USER"
    install -d -m 700 "$STATE_DIR" "$RAY_TMPDIR"
    [ -f "$KEY" ] || ssh-keygen -q -t ed25519 -N '' -C "sentsweep cluster smoke test" -f "$KEY"
    # the cluster's Ray token, made once (the launcher copies it to the head: cluster-onprem.yaml's file_mounts)
    [ -s "$TOKEN" ] || (umask 077 && "$VENV/bin/python" -c "import secrets; print(secrets.token_hex(32), end='')" \
        > "$TOKEN")
    install -d -m 700 -o "$CLUSTER_USER" -g "$CLUSTER_USER" "$HOME_DIR/.ssh"
    install -m 600 -o "$CLUSTER_USER" -g "$CLUSTER_USER" "$KEY.pub" "$HOME_DIR/.ssh/authorized_keys"
    if ! listening_on_22; then
        cat > "$SSHD_CONFIG" <<EOF
# sshd of scripts/cluster_smoke.sh: loopback only, key login of $CLUSTER_USER only.
ListenAddress 127.0.0.1
Port 22
PidFile /run/sentsweep-cluster-sshd.pid
AllowUsers $CLUSTER_USER
PermitRootLogin no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
UsePAM yes
Subsystem sftp /usr/lib/openssh/sftp-server
EOF
        mkdir -p /run/sshd
        /usr/sbin/sshd -f "$SSHD_CONFIG"
        sleep 1
    fi
    ssh -i "$KEY" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        "$CLUSTER_USER@127.0.0.1" true || { echo "cannot ssh to $CLUSTER_USER@127.0.0.1" >&2; exit 1; }
}

# Every process of the dedicated user, stopped by its id: that user runs this test's cluster and nothing else.
stop_user_processes() {
    local pids
    pids=$(pgrep -u "$CLUSTER_USER" || true)
    [ -z "$pids" ] && return 0
    echo "stopping $CLUSTER_USER's processes:"
    ps -o pid=,args= -p "$(echo $pids | tr ' ' ,)" | cut -c1-150 || true
    kill $pids 2>/dev/null || true
    sleep 3
    pids=$(pgrep -u "$CLUSTER_USER" || true)
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
}

set_up_machine
step "fresh state: no process of $CLUSTER_USER, an empty ~/shared (MLflow artifacts, Ray storage), no MLflow database"
stop_user_processes
rm -rf "$HOME_DIR/shared" "$HOME_DIR/sentsweep-mlflow" "$HOME_DIR/sweep_outputs" "$HOME_DIR/mlflow.log"
[ "${FRESH:-0}" = 1 ] && rm -rf "$HOME_DIR/sentsweep-venv" "$HOME_DIR/sentsweep"
"$VENV/bin/python" "$PROJECT/scripts/cluster_local_config.py" --user "$CLUSTER_USER" --key "$KEY" \
    --home "$HOME_DIR" --auth-token "$TOKEN" --mlflow-port "$MLFLOW_PORT" --ray-port "$RAY_PORT" --output "$CONFIG"

cd "$PROJECT"  # file_mounts' "." is the project
RAY="$VENV/bin/ray"
down() {
    if [ "${KEEP_CLUSTER:-0}" != 1 ]; then
        step "ray down -y $CONFIG"
        "$RAY" down -y "$CONFIG" || true
        stop_user_processes  # the MLflow server, which `ray down` leaves running
    fi
}
trap down EXIT

start=$(date +%s)
step "ray up -y $CONFIG"
"$RAY" up -y --no-config-cache "$CONFIG"
step "ray submit $CONFIG sweeps/nm_weight.py --quick $SWEEP_ARGS"
"$RAY" submit "$CONFIG" sweeps/nm_weight.py --quick $SWEEP_ARGS

step "ray submit $CONFIG examples/own_objective.py --quick (an objective of one's own, sent to the workers)"
"$RAY" submit "$CONFIG" examples/own_objective.py --quick

step "the runs in the head's MLflow server, http://127.0.0.1:$MLFLOW_PORT"
"$VENV/bin/python" - "$MLFLOW_PORT" nm_weight own_objective <<'EOF'
import sys

from mlflow.tracking import MlflowClient

client = MlflowClient(f"http://127.0.0.1:{sys.argv[1]}")
for name in sys.argv[2:]:
    experiment = client.get_experiment_by_name(name)
    runs = client.search_runs([experiment.experiment_id], max_results=1000)
    sweeps = [run for run in runs if "mlflow.parentRunId" not in run.data.tags]
    assert len(sweeps) == 1, f"{name}: expected one sweep (parent) run, found {len(sweeps)}"
    parent = sweeps[0]
    trials = [run for run in runs if run.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    finished = [run for run in trials if run.info.status == "FINISHED"]
    print(f"experiment {name} (id {experiment.experiment_id}): sweep run {parent.info.run_name} "
          f"{parent.info.status}, {len(trials)} trial runs, {len(finished)} FINISHED")
    for run in sorted(trials, key=lambda r: r.info.run_name)[:4]:
        dev = run.data.metrics.get("best_sts_dev", float("nan"))
        print(f"  {run.info.run_name} {run.info.status} best_sts_dev={dev:.2f} code {run.data.tags['code_version']}")
    assert parent.info.status == "FINISHED" and trials and len(finished) == len(trials), f"{name}: unfinished runs"
EOF
step "Ray's token authentication on the head (127.0.0.1:$RAY_PORT): refused without the token, answers with it"
ask_nodes='import sys; from ray._raylet import GcsClient; print(len(GcsClient(address=sys.argv[1]).get_all_node_info()))'
if env -u RAY_AUTH_TOKEN -u RAY_AUTH_TOKEN_PATH RAY_AUTH_MODE=disabled HOME="$STATE_DIR" \
        "$VENV/bin/python" -c "$ask_nodes" "127.0.0.1:$RAY_PORT" >/dev/null 2>&1; then
    echo "the head's Ray answered a client without the token" >&2; exit 1
fi
nodes=$(RAY_AUTH_MODE=token RAY_AUTH_TOKEN_PATH=$TOKEN "$VENV/bin/python" -c "$ask_nodes" "127.0.0.1:$RAY_PORT")
echo "a client without the token was refused; with it, the head counts $nodes node(s)"
echo "cluster smoke test passed in $(( $(date +%s) - start )) s (ray up to the MLflow check)"
