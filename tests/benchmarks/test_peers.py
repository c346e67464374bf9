"""benchmarks.peers and train_throughput --peers: sbx's DQN on our sections, skipped without sbx."""

from __future__ import annotations

import pytest

from benchmarks import train_throughput
from benchmarks.floor import section_of
from benchmarks.peers import sbx_available, sbx_kwargs, sbx_rate

needs_sbx = pytest.mark.skipif(not sbx_available(), reason="sbx is not installed (the peers extra)")


@needs_sbx
def test_sbx_takes_the_dqn_keys_it_has_and_names_those_it_lacks():
    kwargs, lacking = sbx_kwargs(section_of("BallSumo-v0", "dqn"))
    assert lacking == ["max_grad_norm", "tail_averaging"], "sbx's DQN clips no gradients and averages no weights"
    assert kwargs["batch_size"] == 256 and kwargs["n_steps"] == 3 and kwargs["policy_kwargs"] == {"net_arch": [256, 256]}
    assert kwargs["learning_rate"](1.0) == pytest.approx(2.5e-4) and kwargs["learning_rate"](0.5) == pytest.approx(1.25e-4)
    _, uav_lacking = sbx_kwargs(section_of("UAVGrid-v0", "dqn"))
    assert uav_lacking[0].startswith("policy MultiInputPolicy (sbx's DQN has MlpPolicy, CnnPolicy)")


@needs_sbx
@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["BallDuel-v0", "BallSumo-v0"])
def test_our_dqn_sections_train_under_sbx_on_a_tiny_budget(env_id):
    overrides = {"learning_starts": 64, "buffer_size": 500}
    if env_id == "BallSumo-v0":  # self-play needs our trainers' pool: sbx plays the section against chaser
        overrides["env_kwargs"] = {**section_of(env_id, "dqn").env_kwargs, "opponent": "chaser"}
    section = section_of(env_id, "dqn", overrides)
    result = sbx_rate(section, steps=64, vec_env="native", warmup=16)
    lacks = ["max_grad_norm", "tail_averaging"] if env_id == "BallSumo-v0" else ["max_grad_norm"]
    assert result["steps_per_s"] > 0 and result["lacking"] == lacks


def test_peers_are_skipped_in_one_line_without_sbx(monkeypatch, capsys):
    monkeypatch.setattr(train_throughput, "sbx_available", lambda: False)
    ran = {}

    def fake_run(*args, **kwargs):
        ran["peers"] = args[-1]
        return {"machine": "m", "device": "cpu", "rows": [], "peers": args[-1]}

    monkeypatch.setattr(train_throughput, "run", fake_run)
    monkeypatch.setattr(train_throughput, "write_json", lambda name, result: "x.json")
    train_throughput.main(["--peers", "--envs", "BallDuel-v0", "--vec-envs", "native"])
    assert ran["peers"] is False
    assert "--peers: sbx is not installed" in capsys.readouterr().err


def test_the_table_shows_the_peer_and_our_ratio_to_it():
    row = {"env": "BallDuel-v0", "vec_env": "native", "ratio": 1.5}
    for name, rate in (("sb3", 100.0), ("custom", 150.0)):
        row |= {f"{name}_steps_per_s": rate, f"{name}_of_floor": 0.5, f"{name}_floor": 2 * rate}
    row |= {"sbx_steps_per_s": 50.0, "sbx_lacking": ["max_grad_norm"]}
    table = train_throughput.format_table({"rows": [row], "peers": True})
    assert "sbx DQN steps/s (lacks)" in table and "| 50 (max_grad_norm) | 3.00 |" in table


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--steps", "0"], "--steps must be in 1..10000000, got 0"),  # it trained 48 s, then divided by zero
        (["--rounds", "0"], "--rounds must be in 1..100, got 0"),
        (["--steps", str(10**20)], "--steps must be in 1..10000000"),  # it ran until killed
        (["--envs", "Nope-v0"], "unknown env 'Nope-v0'"),
        (["--device", "cuda"], "--device cuda"),
    ],
)
def test_train_throughput_refuses_bad_budgets_in_one_line(argv, message, capsys, monkeypatch):
    import torch

    from tests.helpers import refused

    if "cuda" in argv and torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    monkeypatch.setattr(train_throughput, "run", lambda *args: pytest.fail("nothing is timed after a refusal"))
    assert message in refused(capsys, train_throughput.main, argv)
