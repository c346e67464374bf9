"""``--address`` and the CPUs a run asks Ray for: one line and exit 2 within seconds, before any
folder, where Ray itself would wait minutes (deaf to the stop signals it holds back meanwhile) or
fail with a traceback. Its own module: no Ray of a fixture is up, so ``auto`` finds no cluster.
Runs where the rllib extra is installed (CI's oldest-gymnasium stage)."""

from __future__ import annotations

import os
import time

import pytest

pytest.importorskip("ray")

from agents import train  # noqa: E402  (after the skip: these tests need Ray)
from tests.helpers import refused  # noqa: E402


@pytest.fixture
def deaf_server():
    """A plain TCP server on 127.0.0.1 that accepts and says nothing: not a Ray head."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    accepted = []

    def accept() -> None:
        while True:
            try:
                accepted.append(server.accept()[0])
            except OSError:  # closed
                return

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1]
    server.close()
    for connection in accepted:
        connection.close()


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_address_where_something_not_ray_listens_is_refused_within_seconds(deaf_server, scheme, tmp_path, capsys):
    argv = ["--algo", "rllib_ppo", "--env", "BallDuel-v0", "--address", f"{scheme}127.0.0.1:{deaf_server}"]
    started = time.monotonic()
    err = refused(capsys, train.main, [*argv, "--log-dir", str(tmp_path)], tmp_path)
    assert f"something listens at 127.0.0.1:{deaf_server}, but not a Ray head" in err
    assert time.monotonic() - started < 30, "Ray itself waited minutes here, deaf to SIGTERM"


@pytest.mark.parametrize(
    "address, message",
    [
        ("a" * 64 + ".example:6379", "(tried for up to 10 s: UnicodeError)"),  # a label IDNA refuses
        ("auto", "--address 'auto': Ray could not join it: Could not find any running Ray instance"),
    ],
)
def test_an_address_ray_cannot_join_is_one_line_and_leaves_no_folder(address, message, tmp_path, capsys):
    argv = ["--algo", "rllib_ppo", "--env", "BallDuel-v0", "--address", address, "--timesteps", "64"]
    assert message in refused(capsys, train.main, [*argv, "--log-dir", str(tmp_path)], tmp_path)
    assert not list(tmp_path.iterdir())


def test_more_env_runners_than_this_machine_has_cpus_are_refused_before_ray_starts(tmp_path, capsys):
    many = (os.cpu_count() or 1) + 1
    argv = ["--algo", "rllib_ppo", "--env", "BallDuel-v0", "--hyperparams", f"env_runners={many}", "--log-dir", str(tmp_path)]
    assert f"env_runners={many} and learners=0 ask Ray for {many} CPUs" in refused(capsys, train.main, argv, tmp_path)
