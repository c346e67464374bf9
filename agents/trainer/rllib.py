"""Ray RLlib's PPO as ``python -m agents.train --algo rllib_ppo`` drives it: one
:class:`agents.trainer.training.Learner` around an RLlib ``Algorithm``.

RLlib owns the loop: an iteration (``Algorithm.train()``) samples ``n_steps`` from every env on
every env runner (Ray actors, on this machine or a cluster's: ``--address``) and trains on them;
this learner feeds the milestones after each iteration, so checkpoints, evaluations and the console
land on iteration boundaries. A one-player run plays the env id through RLlib's own env runner,
vectorised by our batched vector env (``gym_env_vectorize_mode="vector_entry_point"``); a
two-player run with ``--opponent self`` plays :class:`agents.rllib.duel_pool.DuelPool`, whose snapshot
slots this learner refreshes every ``snapshot_steps``. A model is the learning module's weights
(``<name>.npz``, played by :mod:`agents.rllib.network` without Ray), beside RLlib's own checkpoint
(``<name>.rllib/``, msgpack state files, from which ``--resume`` continues).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.logger import Logger

from agents.artifacts.runs import atomic_path
from agents.common.configuration.config import Section, schedule
from agents.common.configuration.hyperparameters import SelfPlay
from agents.common.configuration.registry import Algorithm
from agents.common.errors import UsageError, note
from agents.common.readers import count, weight_arrays
from agents.common.stops import STOP_SIGNALS, deferring_stops
from agents.rllib import LEARNER, SINGLE_MODULE
from agents.rllib.checkpoint_check import check_checkpoint
from agents.rllib.network import NetworkSettings, RLlibPolicy, network_settings, policy_network
from agents.session.milestones import Milestones
from agents.trainer.setup import RunSetup
from ballenvs.reference import reference_for

#: The model file's entry that holds the env steps trained (beside the weights).
STEPS_KEY = "num_env_steps_trained"
CHECKPOINT_SUFFIX = ".rllib"
#: How long ``--address`` is given to answer before the run is refused.
ADDRESS_WAIT_S = 10.0


@dataclass(frozen=True)
class RLlibRunChecked:
    """What :meth:`RLlibLearner.check` read of the run, for its ``start``: the observations' shape,
    the number of actions and the network the section asks for."""

    shape: tuple[int, ...]
    n_actions: int
    network: NetworkSettings


class RLlibLearner:
    """RLlib's env runners keep the self-play pool (agents.rllib.duel_pool): the milestones get none."""

    def __init__(self, algo: Algorithm, address: str | None = None) -> None:
        self.address = address
        self._steps = 0

    def check(
        self, section: Section, observation_space: spaces.Space, action_space: spaces.Space, resume: Path | None, device: str
    ) -> RLlibRunChecked:
        """What RLlib would find wrong only once its actors start: Ray missing, a frame stack, byte
        or channels-first frames, a resume without RLlib's checkpoint."""
        if importlib.util.find_spec("ray") is None:
            raise UsageError('--algo rllib_ppo needs Ray RLlib: pip install "ballenvs[rllib]"')
        check_address(self.address)
        runners, learners = int(section.algo_kwargs.get("env_runners", 0)), int(section.algo_kwargs.get("learners", 0))
        if self.address is None and runners + learners > (os.cpu_count() or 1):  # this machine's own Ray: its CPUs
            raise UsageError(
                f"env_runners={runners} and learners={learners} ask Ray for {runners + learners} CPUs, this machine has "
                f"{os.cpu_count()}: ask for fewer, or run on a cluster (--address)"
            )
        if (section.frame_stack or 1) > 1:
            raise UsageError(
                f"frame_stack={section.frame_stack}: rllib_ppo plays single frames (RLlib stacks with its connectors)"
            )
        network = network_settings(section.algo_kwargs.get("policy_kwargs"))
        if isinstance(observation_space, spaces.Box) and len(observation_space.shape) == 3:
            if observation_space.dtype != np.float32:
                raise UsageError("RLlib's CNN takes float frames: add --env-kwargs pixel_dtype=float32")
            if observation_space.shape[-1] > observation_space.shape[0]:
                raise UsageError(
                    f"RLlib's CNN reads frames channels-last, not {observation_space.shape}: add channels_last=true"
                )
        if resume is not None:
            if not resume.with_suffix(CHECKPOINT_SUFFIX).is_dir():
                raise UsageError(
                    f"--resume {str(resume)!r}: no RLlib checkpoint {resume.with_suffix(CHECKPOINT_SUFFIX).name} beside it"
                )
            check_checkpoint(resume.with_suffix(CHECKPOINT_SUFFIX), (LEARNER, SINGLE_MODULE))
        if not isinstance(action_space, spaces.Discrete):
            raise UsageError(f"rllib_ppo plays discrete actions, not {action_space}")
        check_learners(section)
        return RLlibRunChecked(tuple(observation_space.shape or ()), int(action_space.n), network)

    def start(self, setup: RunSetup[RLlibRunChecked], logger: Logger) -> list[Any]:
        import ray

        self.section, self.self_play, self.logger = setup.section, setup.self_play, logger
        checked = setup.checked
        self._shape, self._n_actions, self._network = checked.shape, checked.n_actions, checked.network
        self._steps = self._steps_at_start(setup)
        if self.self_play is not None:
            check_pool(self.self_play, setup.section.env_id)
        started_ray = not ray.is_initialized()  # a Ray the caller started is theirs to shut down
        ray_run = RayRun(None, started_ray)
        try:
            with stops_left_to_the_trainer():
                if started_ray:
                    # "local": a Ray of this run's own, not a cluster a past `ray start` left named in /tmp/ray
                    address = self.address or "local"
                    # A stop during ray.init waits for it: raised inside, it left Ray half started and
                    # its shutdown hanging. Neither of Ray's own SIGTERM handlers is set.
                    with deferring_stops() as stop, ray_sets_no_sigterm_handlers():
                        try:
                            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
                        except (ConnectionError, TimeoutError, RuntimeError, ValueError) as error:  # `auto` with no cluster
                            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                            raise UsageError(f"--address {address!r}: Ray could not join it: {first}") from None
                    stop.raise_if_stopped()
                check_cpus(setup.section, local=self.address is None)
                self.algo = ray_run.algo = self._build(setup)
            if setup.resume is not None:
                self.algo.restore_from_path(str(setup.resume.with_suffix(CHECKPOINT_SUFFIX).resolve()))
        except BaseException:
            ray_run.close()  # the run folder goes (training.starting), and so does the Ray it started
            raise
        for line in where_actors_run(self.algo):
            note(line)
        if setup.resume is not None:
            note(f"resumed from {setup.resume} at step {self._steps}")
            note("resume is not exact: RLlib's env runners start fresh games and generators")
        elif self.self_play is not None:
            self._refresh_snapshots(self.snapshots)  # every slot starts as the learner: no random-network opponents
        self._next_snapshot = self._steps + (self.self_play.snapshot_steps if self.self_play else 0)
        self._slot = 0
        return [ray_run]

    def _build(self, setup: RunSetup) -> Any:
        """RLlib's PPO for the run's section: its env (or the self-play pool's), network and keys."""
        from ray.rllib.algorithms.ppo import PPOConfig
        from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
        from ray.util.debug import log_once

        from agents.rllib import duel_pool
        from agents.rllib.metrics import WinRates

        section, keys = setup.section, setup.section.algo_kwargs
        picture = len(self._shape) == 3
        env_runners, learners = int(keys.get("env_runners", 0)), int(keys.get("learners", 0))
        config = (
            PPOConfig()
            .env_runners(
                num_env_runners=env_runners,
                num_envs_per_env_runner=section.n_envs,
                rollout_fragment_length=int(keys.get("n_steps", 2048)),
            )
            .rl_module(model_config=DefaultModelConfig(**self._network.model_config(picture)))
            .training(
                lr=learning_rate(keys.get("learning_rate", 3e-4), self._steps + setup.timesteps),
                gamma=float(keys.get("gamma", 0.99)),
                lambda_=float(keys.get("gae_lambda", 0.95)),
                clip_param=float(keys.get("clip_range", 0.2)),
                entropy_coeff=float(keys.get("ent_coef", 0.0)),
                vf_loss_coeff=float(keys.get("vf_coef", 0.5)),
                grad_clip=float(keys.get("max_grad_norm", 0.5)),
                train_batch_size_per_learner=iteration_batch(section) // max(learners, 1),
                minibatch_size=int(keys.get("batch_size", 64)),
                num_epochs=int(keys.get("n_epochs", 10)),
            )
            .learners(num_learners=learners, num_gpus_per_learner=1 if setup.device == "cuda" else 0)
            .callbacks(WinRates)
            .debugging(seed=setup.seed)
            .reporting(metrics_num_episodes_for_smoothing=100)
        )
        self.learner_id = LEARNER if self.self_play is not None else SINGLE_MODULE
        # RLlib warns once a process that PPO runs on its new API stack by default: ours by choice,
        # a line on every run's stderr that tells its user nothing. Spent here, it is not printed.
        log_once(f"{config.algo_class.__name__}_on_new_api_stack")
        if self.self_play is None:
            config = config.environment(f"ballenvs:{section.env_id}", env_config=dict(section.env_kwargs))
            return config.env_runners(gym_env_vectorize_mode="vector_entry_point").build_algo()
        duel_pool.register()
        pool = {"env_id": section.env_id, "env_kwargs": dict(section.env_kwargs), "self_play": section.self_play}
        self.snapshots = duel_pool.snapshot_ids(self.self_play.window)
        config = config.environment(duel_pool.SELF_PLAY_ENV, env_config=pool).multi_agent(
            policies={LEARNER, *self.snapshots}, policy_mapping_fn=duel_pool.module_of, policies_to_train=[LEARNER]
        )
        return config.build_algo()

    @staticmethod
    def _steps_at_start(setup: RunSetup) -> int:
        """The env steps the resumed model had trained (0 for a new run), from its file."""
        if setup.resume is None:
            return 0
        saved = weight_arrays(setup.resume, "RLlib model")
        return count(saved[STEPS_KEY].tolist(), f"{setup.resume}'s {STEPS_KEY}") if STEPS_KEY in saved else 0

    @property
    def num_timesteps(self) -> int:
        return self._steps

    def learn(self, timesteps: int, milestones: Milestones) -> None:
        """Iterations until ``timesteps`` more env steps are played (the last one's batch may go past)."""
        from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED

        milestones.start(self._steps)
        end = self._steps + timesteps
        while self._steps < end:
            result = self.algo.train()
            sampled = result.get(ENV_RUNNER_RESULTS, {}).get(NUM_ENV_STEPS_SAMPLED, 0)
            self._steps += int(sampled) if np.isfinite(sampled) else 0  # NaN: every runner of the iteration lost
            self._log(result)
            if self.self_play is not None and self._steps >= self._next_snapshot:
                self._refresh_snapshots([self.snapshots[self._slot % len(self.snapshots)]])
                self._slot += 1
                self._next_snapshot = self._steps + self.self_play.snapshot_steps
            if not milestones.on_step(self._steps):
                break

    def _refresh_snapshots(self, slots: list[str]) -> None:
        """The learner's weights into these snapshot slots, on the learner and on every env runner."""
        group = self.algo.learner_group
        weights = group.get_weights(module_ids=[self.learner_id])[self.learner_id]
        group.set_weights({slot: weights for slot in slots})
        self.algo.env_runner_group.sync_weights(from_worker_or_learner_group=group, policies=slots, inference_only=True)

    def _log(self, result: dict[str, Any]) -> None:
        runners = result.get("env_runners", {})
        learner = result.get("learners", {}).get(self.learner_id, {})
        values = {
            "rollout/ep_rew_mean": runners.get("episode_return_mean"),
            "rollout/ep_len_mean": runners.get("episode_len_mean"),
            "train/policy_loss": learner.get("policy_loss"),
            "train/value_loss": learner.get("vf_loss"),
            "train/entropy": learner.get("entropy"),
            "time/iterations": result.get("training_iteration"),
            # Where an iteration's time goes: the env runners' sampling, the learners' update.
            "time/iteration_s": result.get("time_this_iter_s"),
            "time/sample_s": result.get("timers", {}).get("env_runner_sampling_timer"),
            "time/learn_s": result.get("timers", {}).get("learner_update_timer"),
        }
        for opponent, rate in (runners.get("win_rate") or {}).items():
            values[f"win_rate/{opponent}"] = rate
        for name, value in values.items():
            if isinstance(value, (int, float, np.floating)) and np.isfinite(value):
                self.logger.record(name, float(value))
        self.logger.dump(self._steps)

    def weights(self) -> dict[str, np.ndarray]:
        state = self.algo.learner_group.get_weights(module_ids=[self.learner_id])[self.learner_id]
        return {name: np.asarray(value) for name, value in state.items()}

    def policy(self) -> RLlibPolicy:
        policy_kwargs = self.section.algo_kwargs.get("policy_kwargs")
        return RLlibPolicy(policy_network(self.weights(), self._shape, self._n_actions, policy_kwargs), "cpu")

    def save(self, path: Path) -> None:
        """The module's weights (``path``, an .npz) and RLlib's checkpoint beside it (``.rllib``)."""
        checkpoint = path.with_suffix(CHECKPOINT_SUFFIX)
        staging = checkpoint.with_name(f".{checkpoint.name}.tmp")
        shutil.rmtree(staging, ignore_errors=True)
        self.algo.save_to_path(str(staging.resolve()), use_msgpack=True)
        shutil.rmtree(checkpoint, ignore_errors=True)
        staging.rename(checkpoint)
        with atomic_path(path) as tmp, open(tmp, "wb") as file:
            arrays = {**self.weights(), STEPS_KEY: np.asarray(self._steps, dtype=np.int64)}
            np.savez(file, allow_pickle=False, **arrays)


def iteration_batch(section: Section) -> int:
    """The env steps an iteration trains on: ``n_steps`` in each of ``n_envs`` envs on every env runner."""
    keys = section.algo_kwargs
    return int(keys.get("n_steps", 2048)) * section.n_envs * max(int(keys.get("env_runners", 0)), 1)


def check_learners(section: Section) -> None:
    """``learners`` Ray actors split each iteration's batch evenly and each cuts its share into
    minibatches of ``batch_size``: a batch they cannot share so is refused before Ray starts."""
    learners, batch = int(section.algo_kwargs.get("learners", 0)), iteration_batch(section)
    minibatch = int(section.algo_kwargs.get("batch_size", 64))
    if learners > 1 and (batch % learners or batch // learners < minibatch):
        raise UsageError(
            f"learners={learners}: an iteration's batch of {batch:,} env steps (n_steps x n_envs x env runners) "
            f"must split evenly into shares of at least batch_size={minibatch}"
        )


def check_cpus(section: Section, local: bool) -> None:
    """Each env runner and each learner is a Ray actor that holds a CPU; Ray waits for as many as
    they ask, forever where they never come. On this machine's own Ray that is refused at once; a
    cluster may still be joined by nodes, so its run is told why it waits."""
    import ray

    runners, learners = int(section.algo_kwargs.get("env_runners", 0)), int(section.algo_kwargs.get("learners", 0))
    have = ray.cluster_resources().get("CPU", 0.0)
    if runners + learners <= have:
        return
    asked = f"env_runners={runners} and learners={learners} ask Ray for {runners + learners} CPUs"
    if local:
        raise UsageError(f"{asked}, this machine has {have:g}: ask for fewer, or run on a cluster (--address)")
    note(f"{asked}, the cluster has {have:g} now: the run waits for nodes to join")


def where_actors_run(algo: Any) -> list[str]:
    """Where the env runners and learners (Ray actors) run, as each reports its own Ray node: on
    the trainer's node or on others'. What a user of a cluster checks first."""
    import ray

    here = ray.get_runtime_context().get_node_id()

    def node(_: Any = None) -> str:
        return ray.get_runtime_context().get_node_id()

    placed = {}
    if algo.env_runner_group.num_remote_env_runners():
        placed["env runner"] = algo.env_runner_group.foreach_env_runner(node, local_env_runner=False)
    if algo.learner_group.is_remote:
        placed["learner"] = [result.get() for result in algo.learner_group.foreach_learner(node)]
    lines = []
    for kind, nodes in placed.items():
        on_this = sum(found == here for found in nodes)
        others = len(set(nodes) - {here})
        lines.append(
            f"{len(nodes)} {kind}(s): {on_this} on the trainer's Ray node, {len(nodes) - on_this} on {others} other node(s)"
        )
    return lines


def check_address(address: str | None) -> None:
    """``--address``: none (a Ray of this machine), auto (Ray finds the cluster), or a head's
    HOST:PORT (or ray://HOST:PORT) where something answers within :data:`ADDRESS_WAIT_S`: Ray itself
    waits minutes on an address where nothing listens, then fails with a traceback."""
    if address is None or address == "auto":
        return
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(
            f"--address {address!r}: a Ray cluster's head as HOST:PORT (e.g. 127.0.0.1:6379), ray://HOST:PORT, or auto"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=ADDRESS_WAIT_S) as connection:
            speaks_grpc = answers_http2(connection)
    except (OSError, UnicodeError) as error:  # UnicodeError: a host name IDNA refuses (a label past 63 characters)
        reason = getattr(error, "strerror", None) or type(error).__name__
        raise UsageError(
            f"--address {address!r}: no Ray head answers at {host}:{port} (tried for up to {ADDRESS_WAIT_S:.0f} s: {reason})"
        ) from None
    if not speaks_grpc:  # Ray would wait on it for minutes, deaf to the stop signals it holds back then
        raise UsageError(
            f"--address {address!r}: something listens at {host}:{port}, but not a Ray head (it does not answer gRPC)"
        )


#: HTTP/2's client preface and an empty SETTINGS frame: what a gRPC client (Ray's) says first.
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
#: The type of HTTP/2's SETTINGS frame, the first frame a server sends.
HTTP2_SETTINGS = 0x04


def answers_http2(connection: socket.socket) -> bool:
    """Whether the server on ``connection`` speaks HTTP/2, as a Ray head's gRPC servers (the GCS,
    the Ray Client server) do: it answers the client preface with a SETTINGS frame."""
    try:
        connection.sendall(HTTP2_PREFACE)
        header = b""
        while len(header) < 9:
            chunk = connection.recv(9 - len(header))
            if not chunk:
                return False
            header += chunk
    except OSError:  # silence past the timeout, or the connection dropped
        return False
    return header[3] == HTTP2_SETTINGS


def learning_rate(value: float | str, end: int) -> float | list[list[float]]:
    """Adam's step size as RLlib takes it: a number, or for ``lin_<x>`` the points of a schedule
    from x at step 0 to 0 at the run's last step (RLlib interpolates between them)."""
    initial, linear = schedule(value)
    return [[0, initial], [end, 0.0]] if linear else initial


def check_pool(settings: SelfPlay, env_id: str) -> None:
    """RLlib's pool draws its opponents inside the env runners: built-in players only, uniformly."""
    players = reference_for(env_id).players
    foreign = [name for name in settings.scripted_players if name not in players]
    if foreign:
        raise UsageError(
            f"self_play scripted {', '.join(foreign)}: rllib_ppo's pool takes built-in players ({', '.join(players)})"
        )
    if settings.sampling != "uniform":
        raise UsageError(f"self_play sampling={settings.sampling!r}: rllib_ppo's pool draws its snapshots uniformly")
    if settings.scripted_sampling != "turns":
        raise UsageError(
            f"self_play scripted_sampling={settings.scripted_sampling!r}: "
            "rllib_ppo's pool draws its built-in players uniformly"
        )


@contextlib.contextmanager
def stops_left_to_the_trainer() -> Iterator[None]:
    """Ray's processes started in this block leave the stop signals to the trainer, as Ray leaves
    them Ctrl-C: they inherit SIGTERM and SIGUSR1 blocked, so a scheduler's SIGTERM to the process
    group stops the trainer, which saves its model while Ray still runs. The trainer's handlers stay
    set throughout: Ray's start sets none (:func:`ray_sets_no_sigterm_handlers`), nor does the build."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # a stop that came meanwhile is handled now


@contextlib.contextmanager
def ray_sets_no_sigterm_handlers() -> Iterator[None]:
    """``ray.init`` without the two SIGTERM handlers it sets as it starts: its Python one
    (``sys.exit(15)``: no line, no model, the run folder left) and the C++ core worker's failure
    handler (an abort with a stack trace, whichever thread the signal lands on, so blocking the
    signal in this thread does not keep it out). The trainer's handlers answer a stop."""
    import ray._private.ray_constants as ray_constants
    import ray._private.utils as ray_utils

    own_handler, own_failure_setting = ray_utils.set_sigterm_handler, ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER
    ray_utils.set_sigterm_handler = lambda handler: None
    ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER = True  # read by the driver's core worker as it starts
    try:
        yield
    finally:
        ray_utils.set_sigterm_handler = own_handler
        ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER = own_failure_setting


class RayRun:
    """What the run closes when it ends (as it closes envs): the RLlib algorithm and its actors,
    then Ray if the run started it."""

    def __init__(self, algo: Any, started_ray: bool) -> None:
        self.algo, self.started_ray = algo, started_ray

    def close(self) -> None:
        import ray

        if self.algo is not None:
            self.algo.stop()
        if self.started_ray:
            ray.shutdown()
