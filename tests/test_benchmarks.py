"""Benchmarks in --quick mode: they run, write JSON that parses, and render their tables.
Speed is not asserted here: figures live in benchmarks/RESULTS.md."""

from __future__ import annotations

import json

import pytest

import benchmarks.__main__ as runner


@pytest.mark.slow
def test_quick_pass_writes_every_result(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    results_md = tmp_path / "RESULTS.md"
    results_md.write_text("# notes\n")
    results = runner.main(["--quick", "--results", str(results_md)])
    assert set(results) == set(runner.BENCHMARKS)
    for name in runner.BENCHMARKS:
        payload = json.loads((tmp_path / f"{name}.json").read_text())
        assert payload["benchmark"] == name and payload["machine"]
    assert results_md.read_text() == "# notes\n", "--quick leaves RESULTS.md alone"
    out = capsys.readouterr().out
    assert "| CartPole-v1 | " in out and "| per sample: predict, predict, fit" in out and "anti-pattern" in out
    flat = results["episode_flatness"]
    assert flat["ours"]["episodes"] == 3 and flat["anti_pattern"]["episodes"] == 2


def test_results_update_replaces_only_the_marked_block(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text("# R\n\n## a\n\n<!-- results:a -->\nold\n<!-- /results:a -->\n\nhand-written note\n")
    runner.update_results(path, "a", "new table")
    runner.update_results(path, "b", "other")
    text = path.read_text()
    assert "old" not in text and "<!-- results:a -->\nnew table\n<!-- /results:a -->" in text
    assert "hand-written note" in text and "## b\n\n<!-- results:b -->\nother\n<!-- /results:b -->" in text


@pytest.mark.slow
def test_the_gpu_benchmark_runs_its_quick_pass_on_the_cpu(tmp_path, monkeypatch, capsys):
    from benchmarks import gpu

    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    results_md = tmp_path / "RESULTS.md"
    result = gpu.main(["--quick", "--device", "cpu", "--results", str(results_md)])
    assert result["device"] == "cpu"
    rows = {(r["env"], r["trainer"]): r for r in result["throughput"]}
    for env_id in gpu.ENVS:
        for trainer in ("SB3 DQN", "custom", "PQN (its config)"):
            assert rows[env_id, trainer]["steps_per_s"] > 0, (env_id, trainer)
        assert rows[env_id, "custom --compile"]["steps_per_s"] is None, "CUDA only: not measured on a CPU"
    assert [r["trainer"] for r in result["skill"]] == list(gpu.SKILL_RUNS)
    assert json.loads((tmp_path / "gpu.json").read_text())["benchmark"] == "gpu"
    assert not results_md.exists(), "--quick leaves RESULTS.md alone"
    assert "n/a (CUDA only)" in capsys.readouterr().out
