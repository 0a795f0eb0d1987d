"""Resource checks before launch: requests no node can run are refused on a fixed cluster, trials that
wait PENDING too long end the sweep on an autoscaling one, and trials sharing a GPU are checked (or chosen) to fit
in its memory by a probe whose measurement is stubbed here (this machine has no GPU)."""

import json
import pickle
import re
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
import ray
from mlflow.tracking import MlflowClient

from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
from sentsweep.data import read_corpus
from sentsweep.demo_data import CORPUS_FILE
from sentsweep.errors import InputError
from sentsweep.sweep.compute.cluster import (
    Node,
    PendingWatch,
    check_schedulable,
    unschedulable_problem,
    watch_named,
)
from sentsweep.sweep.compute.gpu_packing import (
    CUDA_CONTEXT_BYTES,
    PROBE_STEPS,
    GiB,
    Probe,
    ProbeKey,
    ProbeSession,
    check_fraction,
    choose_fraction,
    gpu_cpu_cap,
    measure_on_cluster,
    probe_configs,
    probe_trial_config,
    settle_gpus,
    trial_footprint,
)
from sentsweep.sweep.compute.probe_records import (
    PROBES_FILE,
    StoredProbe,
    keep_probes,
    probes_file,
    read_probes,
    recording,
)
from sentsweep.sweep.compute.resources import check_resources
from sentsweep.sweep.config.option_checks import check_option_bounds
from sentsweep.sweep.config.options import GPUS_AUTO, SweepOptions, parse_options
from sentsweep.trainables.catalog import train
from sentsweep.trainables.session import LocalSession
from tests.helpers.cluster_helpers import folder_store
from tests.sweep.test_sweep_end_to_end import load_sweep

ADDRESS = "10.0.0.1:6379"
H100 = 80 * GiB


# --- requests no node can run --------------------------------------------------------------------------------


def test_a_laptop_without_gpu_refuses_a_gpu_request_naming_it_and_the_cluster():
    problem = unschedulable_problem(1, 0.5, ADDRESS, [Node("10.0.0.1", 2, 0)])
    assert problem.startswith("--gpus-per-trial 0.5: the Ray cluster at 10.0.0.1:6379 has 0 GPUs (CPUs 2)")
    assert "--autoscaling" in problem
    assert unschedulable_problem(8, 0, ADDRESS, [Node("10.0.0.1", 2, 0)]).startswith(
        "--cpus-per-trial 8: the Ray cluster at 10.0.0.1:6379 has 0 GPUs (CPUs 2)")


def test_a_trial_must_fit_on_one_node_not_on_the_cluster_total():
    nodes = [Node("10.0.0.1", 8, 1), Node("10.0.0.2", 8, 1)]  # 2 GPUs in all, never 2 on one node
    problem = unschedulable_problem(1, 2, ADDRESS, nodes)
    assert problem.startswith("--gpus-per-trial 2: the Ray cluster at 10.0.0.1:6379 has 2 nodes "
                              "(10.0.0.1: 1 GPU (CPUs 8); 10.0.0.2: 1 GPU (CPUs 8))")
    assert unschedulable_problem(8, 1, ADDRESS, nodes) is None
    # CPUs on one node, the GPU on another: each request is met, never both on one node
    split = unschedulable_problem(4, 1, ADDRESS, [Node("10.0.0.1", 16, 0), Node("10.0.0.2", 2, 1)])
    assert split.startswith("--cpus-per-trial 4 --gpus-per-trial 1 (a trial runs on one node, which needs 4 CPUs "
                            "and 1 GPU)")


def test_an_autoscaling_cluster_lets_the_request_wait():
    with pytest.raises(InputError, match="--gpus-per-trial 1: "):
        check_schedulable(1, 1, ADDRESS, [Node("head", 0, 0)], autoscaling=False)
    check_schedulable(1, 1, ADDRESS, [Node("head", 0, 0)], autoscaling=True)


def test_resource_options_are_checked_before_ray_starts():
    assert parse_options(SweepOptions, ["--gpus-per-trial", "auto"]).gpus_per_trial == GPUS_AUTO
    assert parse_options(SweepOptions, ["--gpus-per-trial", "0.25"]).gpus_per_trial == 0.25
    options = dict(cpus_per_trial=1.0, gpus_per_trial=GPUS_AUTO, pending_timeout=None)
    check_option_bounds(SweepOptions(**options))
    for bad, message in (({"gpus_per_trial": -1.0}, "--gpus-per-trial -1.0: must be >= 0"),
                         ({"cpus_per_trial": 0.0}, "--cpus-per-trial 0.0: must be > 0"),
                         ({"pending_timeout": 0.0}, "--pending-timeout 0.0: must be > 0")):
        with pytest.raises(InputError, match=re.escape(message)):
            check_option_bounds(SweepOptions(**options | bad))


class FakeTrial:
    def __init__(self, status):
        self.status = status


def test_pending_watch_fires_only_when_trials_wait_with_none_running():
    now, interrupts = [0.0], []
    watch = PendingWatch("run-a", 10, 4, 0.5, clock=lambda: now[0], describe=lambda: "the cluster has 2 CPUs",
                         interrupt=lambda: interrupts.append(now[0]))
    queued = [FakeTrial("RUNNING"), FakeTrial("PENDING"), FakeTrial("PENDING")]
    for now[0] in (0, 5, 50):  # queued behind a running trial: never stuck
        watch.on_step_begin(0, queued)
    stuck = [FakeTrial("TERMINATED"), FakeTrial("PENDING"), FakeTrial("PENDING")]
    for now[0] in (60, 65):
        watch.on_step_begin(0, stuck)
    now[0] = 66
    watch.on_step_begin(0, queued)  # a trial started: the clock starts again
    for now[0] in (67, 70, 76.9):
        watch.on_step_begin(0, stuck)
    assert watch.message is None and not interrupts
    for now[0] in (77, 78):
        watch.on_step_begin(0, stuck)
    assert interrupts == [77]  # once, as Ctrl-C: Ray Tune saves the run with the trials still PENDING
    assert watch.message == ("--pending-timeout 10: 2 trial(s) waited PENDING 10 s with none running; each asks "
                             "for 4 CPUs and 0.5 GPUs on one node, and the cluster has 2 CPUs")


def test_a_restored_run_is_watched_by_this_drivers_watch():
    """Ray Tune restores a run's pickled callbacks on --resume: they come back as the watch of the same run."""
    watch = PendingWatch("run-b", 30, 1, 0)
    assert pickle.loads(pickle.dumps(watch)) is watch
    inert = watch_named("run-never-watched")
    inert.on_step_begin(0, [FakeTrial("PENDING")])
    assert inert.timeout_s is None and inert.message is None


# --- GPU packing, the measurement stubbed ----------------------------------------------------------------------


def key(batch_size=32, method="tsdae"):
    return ProbeKey("models/all-MiniLM-L6-v2", method, batch_size, 128, "bf16")


def probes(*peaks_gib, memory=H100):
    return {key(32 * (i + 1)): Probe(int(peak * GiB), memory, "NVIDIA H100") for i, peak in enumerate(peaks_gib)}


def test_footprint_is_the_peak_with_margin_and_cuda_context():
    assert trial_footprint(10 * GiB) == 12.5 * GiB + CUDA_CONTEXT_BYTES


def test_auto_chooses_the_largest_share_whose_trials_fit_capped_by_cpus():
    # 12.5 + 1 = 13.5 GiB per trial of the larger key: 5 fit in 80 GiB
    fraction, line = choose_fraction(probes(4, 10), cpu_cap=None)
    assert fraction == 0.2
    assert line == ("GPU packing: --gpus-per-trial auto = 0.2, 5 trial(s) per GPU: a trial of tsdae on "
                    "all-MiniLM-L6-v2 (batch size 64, max_seq_length 128, bf16) peaks at 10.0 GiB (counted 13.5 GiB "
                    "with the 25% margin and 1.0 GiB CUDA context), so 5 fit in the 80.0 GiB available on the "
                    "NVIDIA H100")
    fraction, line = choose_fraction(probes(4, 10), cpu_cap=4)
    assert fraction == 0.25 and line.endswith("so 5 fit in the 80.0 GiB available on the NVIDIA H100, capped at 4 "
                                              "by the GPU node's CPUs")
    assert choose_fraction(probes(20), cpu_cap=None)[0] == 0.3333  # 26 GiB: 3 fit, Ray's 4 decimals
    assert gpu_cpu_cap(1, [Node("cpu", 64, 0), Node("gpu", 16, 4), Node("gpu2", 8, 1)]) == 8


def test_a_packing_that_cannot_fit_is_refused_with_the_numbers():
    with pytest.raises(InputError) as refused:
        check_fraction(0.25, probes(20))
    assert str(refused.value) == (
        "--gpus-per-trial 0.25 puts 4 trials on one GPU; a trial of tsdae on all-MiniLM-L6-v2 (batch size 32, "
        "max_seq_length 128, bf16) peaks at 20.0 GiB (counted 26.0 GiB with the 25% margin and 1.0 GiB CUDA "
        "context), so 4 need 104.0 GiB of the 80.0 GiB available on the NVIDIA H100: 3 fit, use --gpus-per-trial "
        "0.3333 (or auto)")
    assert check_fraction(0.5, probes(20)).startswith("GPU packing: --gpus-per-trial 0.5 puts 2 trial(s) on a GPU: "
                                                      "a trial of tsdae")
    assert check_fraction(0.5, probes(20)).endswith("so 3 fit in the 80.0 GiB available on the NVIDIA H100")
    assert check_fraction(2, probes(20)).startswith("GPU packing: --gpus-per-trial 2 puts 1 trial(s) on a GPU")
    with pytest.raises(InputError, match="peaks at 70.0 GiB .*: more than the 80.0 GiB available on the NVIDIA H100"):
        check_fraction(1, probes(70))
    with pytest.raises(InputError, match="ran out of the 80.0 GiB available on the NVIDIA H100 in the GPU memory "
                                         "probe"):
        check_fraction(1, {key(): Probe(79 * GiB, H100, "NVIDIA H100", out_of_memory=True)})


def test_each_distinct_key_is_probed_once_and_settles_the_fraction(tiny_model_dir):
    constants = dict(method="tsdae", model=str(tiny_model_dir), batch_size=8, max_seq_length=32, lr=1e-3,
                     max_steps=10, corpus=str(CORPUS_FILE), dev_file="dev.csv", test_file="test.csv")
    stages = [("ratio", {"noise_ratio": [0.3, 0.6], "batch_size": [8, 16]}),  # 2 keys, 4 points
              ("pooling", {"pooling": ["cls", "mean"]}),                       # batch size 8 again
              ("precision", {"precision": ["fp32", "bf16"], "method": ["tsdae", "bm25"]})]  # bm25 trains nothing
    configs = probe_configs(constants, {"tsdae": {"max_seq_length": 64}}, stages)
    assert [(k.batch_size, k.max_seq_length, k.precision) for k in configs] == [
        (8, 64, "fp32"), (16, 64, "fp32"), (8, 64, "bf16")]
    assert configs[next(iter(configs))]["noise_ratio"] == 0.3  # the other axes at their first value
    measured = []

    def measure(probe_key, config):
        measured.append(probe_key)
        return Probe({8: 10, 16: 20}[probe_key.batch_size] * GiB, H100, "NVIDIA H100")

    lines = []
    assert settle_gpus(GPUS_AUTO, configs, measure, gpu_possible=True, cpu_cap=lambda: 16, say=lines.append) == 0.3333
    assert measured == list(configs) and len(set(measured)) == 3
    assert lines == [choose_fraction({k: measure(k, c) for k, c in configs.items()}, None)[1]]
    with pytest.raises(InputError, match="--gpus-per-trial 0.5 puts 2 trials on one GPU;"):
        settle_gpus(0.5, configs, lambda k, c: Probe(40 * GiB, H100, "NVIDIA H100"), True, lambda: 16)


def test_without_a_gpu_packing_is_skipped_with_one_line():
    configs = {key(): {}}

    def no_call(probe_key, config):
        raise AssertionError("nothing to measure on")

    for requested, gpu_possible, measure, expected, line in [
        (0.0, True, no_call, 0.0, "GPU packing: skipped, --gpus-per-trial 0 (trials run on CPU)"),
        (GPUS_AUTO, False, no_call, 0.0, "GPU packing: skipped, the Ray cluster has no GPU (trials run on CPU)"),
        (0.5, True, lambda k, c: None, 0.5, "GPU packing: skipped, the GPU Ray offers is no CUDA device PyTorch can "
         "use (memory not measured): 0.5 GPU per trial"),
        (GPUS_AUTO, True, lambda k, c: None, 1.0, "GPU packing: skipped, the GPU Ray offers is no CUDA device "
         "PyTorch can use (memory not measured): 1 GPU per trial"),
    ]:
        lines = []
        assert settle_gpus(requested, configs, measure, gpu_possible, lambda: None, say=lines.append) == expected
        assert lines == [line]


def test_the_probe_trains_the_trials_own_setup_on_the_longest_sentences(tsdae_config, tmp_path):
    config = tsdae_config | {"epochs": 3, "sample_size": 100, "eval_tasks": {"x": "y"}, "keep_model": True}
    probe_config = probe_trial_config(config, tmp_path)
    corpus = read_corpus(probe_config["corpus"])
    assert len(corpus) == 8 * PROBE_STEPS
    assert min(map(len, corpus)) >= sorted(map(len, read_corpus(CORPUS_FILE)))[-8 * PROBE_STEPS]
    assert probe_config | {"corpus": config["corpus"]} == config | {
        "max_steps": PROBE_STEPS, "eval_steps": PROBE_STEPS, "epochs": None, "eval_tasks": None, "keep_model": False}
    session = LocalSession()
    train(probe_config, session)  # on CPU here; the probe measures the same run on a GPU
    assert [report["step"] for report in session.reports] == [0, PROBE_STEPS]
    probe_session, started = ProbeSession(), time.perf_counter()
    train(probe_config, probe_session)
    assert 0 < probe_session.seconds_per_step < (time.perf_counter() - started) / PROBE_STEPS  # the median step
    probe_session.report({"step": 0}, tmp_path)  # a report without steps keeps the last step time
    assert 0 < probe_session.seconds_per_step


def stored(batch_size: int, gpu: str, seconds: float, at: str) -> StoredProbe:
    return StoredProbe(key(batch_size), Probe(batch_size * GiB, H100, gpu, seconds_per_step=seconds), at)


def test_every_probe_a_launch_measures_is_kept_beside_the_earlier_ones(tmp_path):
    """Settling GPU packing with a stubbed measurement writes each probe to the storage path's probes file: an
    earlier entry of another key (or another GPU) stays, the same key on the same GPU is replaced by the newer."""
    path = probes_file(str(tmp_path))
    assert path == tmp_path.resolve() / PROBES_FILE and probes_file("s3://bucket/sweeps") is None
    earlier = [stored(64, "NVIDIA H100", 0.5, "2025-01-01T00:00:00+00:00"),
               stored(8, "NVIDIA A100", 0.9, "2025-01-01T00:00:00+00:00"),
               stored(8, "NVIDIA H100", 0.7, "2025-01-01T00:00:00+00:00")]
    keep_probes(path, earlier)
    configs = {key(8): {}, key(16): {}}

    def measure(probe_key, config):
        return Probe(probe_key.batch_size * GiB, H100, "NVIDIA H100", seconds_per_step=probe_key.batch_size / 100)

    now = datetime(2025, 6, 1, 12, 0, tzinfo=timezone.utc)
    assert settle_gpus(0.5, configs, recording(measure, path, now=lambda: now), True, lambda: None,
                       say=lambda line: None) == 0.5
    later = "2025-06-01T12:00:00+00:00"
    assert read_probes(path) == [earlier[0], earlier[1], stored(8, "NVIDIA H100", 0.08, later),
                                 stored(16, "NVIDIA H100", 0.16, later)]
    assert json.loads(path.read_text())[2] == {
        "model": "models/all-MiniLM-L6-v2", "method": "tsdae", "batch_size": 8, "max_seq_length": 128,
        "precision": "bf16", "gpu_name": "NVIDIA H100", "peak_bytes": 8 * GiB, "gpu_memory_bytes": H100,
        "out_of_memory": False, "seconds_per_step": 0.08, "measured_at": later}
    assert [p.name for p in tmp_path.iterdir()] == [PROBES_FILE]  # no temporary file left behind


@pytest.mark.parametrize("text, reason", [
    ("{not json", "Expecting property name"),
    ('{"probes": []}', "a JSON list of probes expected, found dict"),
    ('[{"model": "m"}]', "entry 0 is not an object with exactly the fields model, method"),
])
def test_a_malformed_probes_file_is_refused_naming_it_before_any_probe(tmp_path, text, reason):
    path = tmp_path / PROBES_FILE
    path.write_text(text)

    def no_call(probe_key, config):
        raise AssertionError("the probe ran before the file was checked")

    with pytest.raises(InputError) as refused:
        settle_gpus(0.5, {key(): {}}, recording(no_call, path), True, lambda: None)
    assert str(refused.value).startswith(f"{path}: not a GPU probes file that sentsweep wrote (")
    assert reason in str(refused.value)
    entry = stored(8, "NVIDIA H100", 0.5, "x").as_entry()
    path.write_text(json.dumps([entry | {"peak_bytes": 1.5}]))
    with pytest.raises(InputError, match=r"entry 0: peak_bytes 1\.5 is no integer"):
        read_probes(path)


# --- with a real local Ray -----------------------------------------------------------------------------------


@pytest.fixture()
def local_ray(shared_ray):
    """The session's Ray on this machine, 2 CPUs and no GPU (tests/conftest.py), joined by this process."""
    ray.init(address=shared_ray, log_to_driver=False)
    yield
    ray.shutdown()


def quick_sweep(tmp_path, *extra):
    module = load_sweep()
    return module.run_sweep(module.DEFINITION, ["--quick", "--output-dir", str(tmp_path / "out"), "--tracking-uri",
                                                folder_store(tmp_path), *extra])


@pytest.mark.slow
@pytest.mark.parametrize("extra, message", [
    (["--gpus-per-trial", "0.5"], r"--gpus-per-trial 0.5: the Ray cluster at \S+ has 0 GPUs \(CPUs 2\)"),
    (["--cpus-per-trial", "8"], r"--cpus-per-trial 8: the Ray cluster at \S+ has 0 GPUs \(CPUs 2\)"),
])
def test_a_request_the_local_ray_cannot_run_is_refused_before_any_trial(local_ray, tmp_path, monkeypatch, capsys,
                                                                        extra, message):
    monkeypatch.chdir(tmp_path)
    assert quick_sweep(tmp_path, *extra) == 2
    assert re.search("error: " + message, capsys.readouterr().err)
    experiment = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}").get_experiment_by_name("tsdae_deletion")
    assert experiment is None  # no MLflow run
    ray_storage = tmp_path / "out" / "ray"  # (where the driver held its sweep's lock)
    assert not ray_storage.exists() or not [path for path in ray_storage.iterdir() if path.is_dir()]  # no Ray Tune run


@pytest.mark.slow
def test_pending_timeout_ends_the_sweep_resumably_and_keeps_what_finished(local_ray, tmp_path, monkeypatch, capsys):
    """Trials asking for more CPUs than the node has, on the autoscaling path (forced by the flag): after the
    timeout the sweep ends with the message, --resume with a request the node fits runs the trials that waited
    under the same sweep run, and a later extension that times out leaves those results as they were."""
    monkeypatch.chdir(tmp_path)
    uri = folder_store(tmp_path)  # the store quick_sweep's sweeps share
    too_big = ["--cpus-per-trial", "4", "--autoscaling", "--pending-timeout", "3"]
    message = (r"error: --pending-timeout 3: 4 trial\(s\) waited PENDING 3 s with none running; each asks for 4 CPUs "
               r"and 0 GPUs on one node, and the Ray cluster at \S+ has 0 GPUs \(CPUs 2\)\n"
               r"their MLflow runs and the sweep's ended KILLED\nresume once the cluster can run the trials:\n  .*")
    assert quick_sweep(tmp_path, "--seeds", "1", "--max-steps", "10", *too_big) == 1
    captured = capsys.readouterr()
    assert re.search(message + r" --resume\n", captured.err), captured.err
    assert "GPU packing: skipped, --gpus-per-trial 0 (trials run on CPU)\n" in captured.out
    parent = latest_sweep_run_id(uri, "tsdae_deletion")
    client = MlflowClient(uri)
    assert client.get_run(parent).info.status == "KILLED"
    assert "untrained_sts_dev" in client.get_run(parent).data.metrics

    assert quick_sweep(tmp_path, "--seeds", "1", "--max-steps", "10", "--resume") == 0, capsys.readouterr().err
    assert latest_sweep_run_id(uri, "tsdae_deletion") == parent
    finished = fetch_trial_runs(uri, "tsdae_deletion", parent)
    assert len(finished) == 4 and (finished["status"] == "FINISHED").all()

    # an extension is continued by its own command line: --extend refuses --resume and skips what finished
    assert quick_sweep(tmp_path, "--seeds", "2", "--max-steps", "10", "--extend", *too_big) == 1
    extension_error = capsys.readouterr().err
    assert re.search(message, extension_error) and not extension_error.rstrip().endswith("--resume")
    after = fetch_trial_runs(uri, "tsdae_deletion", parent)
    assert after.sort_values("run_id")[["run_id", "status", "metrics.best_sts_dev"]].equals(
        finished.sort_values("run_id")[["run_id", "status", "metrics.best_sts_dev"]])
    # that command line with a request the node fits runs the extension's trials, in the same sweep
    assert quick_sweep(tmp_path, "--seeds", "2", "--max-steps", "10", "--extend") == 0, capsys.readouterr().err
    extended = fetch_trial_runs(uri, "tsdae_deletion", parent)
    done = extended[extended["status"] == "FINISHED"]
    assert len(done) == 8 and not done.duplicated(["config_hash", "seed"]).any()


@pytest.mark.slow
def test_a_probe_that_gets_no_gpu_in_time_is_refused(local_ray):
    with pytest.raises(InputError, match=r"--pending-timeout 2: the GPU memory probe of tsdae on all-MiniLM-L6-v2 "
                                         r"\(batch size 32, .*\) got no GPU within 2 s; the Ray cluster at \S+ has "
                                         r"0 GPUs \(CPUs 2\)"):
        measure_on_cluster(1.0, timeout_s=2)(key(), {})


@pytest.mark.slow
def test_a_gpu_pytorch_cannot_see_skips_the_probe_with_one_line(tmp_path, capsys, tiny_model_dir):
    """Ray told of a GPU that is not there (as the distributed tests' clusters are): the probe, a Ray task on that
    GPU, finds no CUDA device; auto then asks for a whole GPU per trial."""
    ray.init(address="local", num_cpus=1, num_gpus=1, include_dashboard=False, log_to_driver=False)
    try:
        args = SweepOptions(cpus_per_trial=1.0, gpus_per_trial=GPUS_AUTO, autoscaling=False, pending_timeout=120.0)
        constants = dict(method="tsdae", model=str(tiny_model_dir), batch_size=8, max_seq_length=32,
                         corpus=str(Path(CORPUS_FILE)))
        assert check_resources(args, constants, {}, [("seeds", {})], str(tmp_path)) == 1.0
    finally:
        ray.shutdown()
    assert not (tmp_path / PROBES_FILE).exists()  # nothing measured, nothing kept
    assert capsys.readouterr().out.strip().splitlines()[-1] == (
        "GPU packing: skipped, the GPU Ray offers is no CUDA device PyTorch can use (memory not measured): "
        "1 GPU per trial")
