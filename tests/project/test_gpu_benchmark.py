"""What benchmarks/gpu_packing.py reads besides the GPU (the card's GPU-hours estimate, the model it trains) and
benchmarks/random_init_model.py, on this machine's CPU: the GPU part runs where a GPU is (scripts/gpu_checks.sh)."""

import json
import re

import pytest

from benchmarks.common import MODEL_VARIABLE, benchmark_model_path
from benchmarks.gpu_packing import STEPS, TRIALS, GpuHours, card_gpu_hours, sweep_argv
from benchmarks.random_init_model import random_init_model


def test_the_benchmark_reads_the_cards_estimate_from_the_probe_its_launch_kept(tmp_path, tiny_model_dir):
    """A probe of the benchmark's trial (tsdae, batch size 32, max_seq_length 64, bf16) at 0.05 s per step, kept
    where the sweep at 0.5 GPU per trial keeps it: its card estimates TRIALS x STEPS x 0.05 s x 0.5 / 3600."""
    storage = tmp_path / "out-0.5" / "ray"
    storage.mkdir(parents=True)
    probe = {"model": str(tiny_model_dir.resolve()), "method": "tsdae", "batch_size": 32, "max_seq_length": 64,
             "precision": "bf16", "gpu_name": "NVIDIA H100 80GB HBM3", "peak_bytes": 2 * 2**30,
             "gpu_memory_bytes": 80 * 2**30, "seconds_per_step": 0.05, "out_of_memory": False,
             "measured_at": "2026-11-28T03:00:00+00:00"}
    (storage / "gpu_probes.json").write_text(json.dumps([probe]))
    assert "--gpus-per-trial" in sweep_argv(0.5, str(tiny_model_dir), tmp_path)

    value, source = card_gpu_hours(0.5, str(tiny_model_dir), tmp_path)

    assert value == f"{TRIALS * STEPS * 0.05 * 0.5 / 3600:.3g}" == "0.00833"
    assert source.startswith("steps x seconds per step of the NVIDIA H100 80GB HBM3 probes in "
                             f"{(storage / 'gpu_probes.json').resolve()} (measured 2026-11-28) x 0.5 GPU per trial")


def test_the_estimate_line_gives_its_ratio_to_the_recorded_hours_where_there_is_one():
    assert GpuHours("0.01", "steps x ...", 0.0125).line() == (
        "the card estimated 0.01 GPU-hours of steps (0.80x the recorded), the trials recorded 0.0125 (steps x ...)")
    assert GpuHours("not estimated", "no probe", 0.0125).line() == (
        "the card estimated not estimated GPU-hours of steps, the trials recorded 0.0125 (no probe)")
    assert GpuHours("0.01", "steps x ...", 0.0).line() == (
        "the card estimated 0.01 GPU-hours of steps, the trials recorded 0 (steps x ...)")


def test_a_random_init_model_has_the_sources_architecture_and_sizes_and_other_weights(tmp_path, tiny_model_dir,
                                                                                        monkeypatch):
    from sentence_transformers import SentenceTransformer

    configuration_only = tmp_path / "config-only"
    configuration_only.mkdir()
    for file in tiny_model_dir.iterdir():
        if file.is_file() and file.suffix != ".safetensors":
            (configuration_only / file.name).write_bytes(file.read_bytes())
    built = random_init_model(configuration_only, tmp_path / "random")
    original, random = SentenceTransformer(str(tiny_model_dir)), SentenceTransformer(str(built))
    shapes = {name: tuple(parameter.shape) for name, parameter in original.named_parameters()}
    assert shapes == {name: tuple(parameter.shape) for name, parameter in random.named_parameters()}
    assert any((a != b).any() for a, b in zip(original.parameters(), random.parameters(), strict=True))
    assert original.tokenize(["a sentence"])["input_ids"].tolist() == random.tokenize(["a sentence"])[
        "input_ids"].tolist()

    monkeypatch.setenv(MODEL_VARIABLE, str(built))
    assert benchmark_model_path() == str(built)
    monkeypatch.setenv(MODEL_VARIABLE, str(tmp_path / "missing"))
    with pytest.raises(SystemExit, match=re.escape(f"{MODEL_VARIABLE}={tmp_path / 'missing'}: no such model folder")):
        benchmark_model_path()
