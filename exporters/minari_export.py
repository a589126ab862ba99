"""``--format minari``: the step data of one Benchmark as a Minari dataset (Arrow storage).

The dataset is written to ``<out>/<dataset_id>/data`` so that, with ``MINARI_DATASETS_PATH=<out>``,
``minari.load_dataset(dataset_id)`` loads it (``minari.MinariDataset("<out>/<dataset_id>/data")`` works
without the variable). One Minari episode per exported Episode, in log order; each episode's metadata
names its Run, Submission, split, pool index, status and globally unique ``episode_id``. Host seeds are
never written (Minari's per-episode ``seed`` stays unset). Every Run must share one Benchmark and declare
its spaces.

When the Benchmark is a gymnasium environment (its spec says ``metadata.source: gymnasium`` and names a
``gymnasium_id`` that gymnasium registers), the dataset records its ``env_spec``: that id with the
recorded step limit and the recorded parameters its constructor takes (e.g. FrozenLake's ``map_name``),
so ``dataset.recover_environment()`` builds the same environment. Only gymnasium's own registry is
consulted (an id naming a module to import is ignored). Other Benchmarks have no gymnasium environment
to recover, and their datasets record no ``env_spec``.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import numpy as np
from evoledger import __version__
from evoledger.exporters.options import ExportOptions
from evoledger.exporters.rows import EpisodeRef, episode_count, episode_refs
from evoledger.exporters.runs import RunFacts
from evoledger.exporters.trajectories import load_trajectory
from evoledger.ledger.errors import ConfigError, SchemaError
from evoledger.ledger.store import Ledger
from evoledger.ledger.trajectories import Trajectory
from gymnasium import registry, spaces
from gymnasium.envs.registration import EnvSpec, load_env_creator

__all__ = ["MinariResult", "default_dataset_id", "env_spec_for", "gym_space", "write_minari"]

_ID: Final = re.compile(r"^(?:[-_\w][-_\w/]*[-_\w]+/)?[-_\w]+?-v\d+$")
_METADATA_CHUNK: Final = 1024


@dataclass(frozen=True, slots=True)
class MinariResult:
    """What the Minari export wrote."""

    dataset_id: str
    path: Path
    episodes: int
    steps: int
    splits: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """Split -> (Episodes, steps), in the order the splits first appeared."""
    env_spec: str | None = None
    """The gymnasium id recorded as the dataset's ``env_spec`` (``None``: no environment to recover)."""


def default_dataset_id(benchmark: str, visibility: str) -> str:
    """``evoledger/<benchmark>/<visibility>-v0`` with the Benchmark id made Minari-safe."""
    safe = re.sub(r"[^-_\w]+", "-", benchmark).strip("-") or "benchmark"
    return f"evoledger/{safe}/{visibility}-v0"


def _bound(values: Any, default: float) -> Any:
    if isinstance(values, list):
        return [_bound(v, default) for v in values]
    return default if values is None else values


def _box_bound(values: Any, default: float, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """A described Box bound: a list of every element's bound, or one value for all (a large uniform Box)."""
    bound = np.asarray(_bound(values, default), dtype=np.float64)
    return np.full(shape, bound) if bound.ndim == 0 else bound.reshape(shape)


_MAX_SPACE_DEPTH: Final = 32
_MAX_SPACE_VALUES: Final = 2**28
"""The most values one Box may declare (a recorded space is untrusted input: no unbounded allocation)."""
_STORABLE_KINDS: Final = "biuf"
"""Box dtypes Minari can store: bool, signed and unsigned integers, floats (of at most 64 bits)."""


def _box_dtype(raw: object) -> np.dtype[Any]:
    try:
        dtype = np.dtype(str(raw))
    except TypeError as exc:
        raise ValueError(f"dtype {raw!r} is not a numpy dtype ({exc})") from None
    if dtype.kind not in _STORABLE_KINDS or dtype.itemsize > 8 or dtype.fields is not None or dtype.subdtype:
        raise ValueError(f"dtype {raw!r} is not a plain bool, integer or float of at most 64 bits")
    return dtype


def _box_shape(raw: object) -> tuple[int, ...]:
    if not isinstance(raw, list) or len(raw) > _MAX_SPACE_DEPTH:
        raise ValueError(f"shape {raw!r} is not a list of at most {_MAX_SPACE_DEPTH} dimensions")
    if not all(isinstance(d, int) and not isinstance(d, bool) and 0 < d <= _MAX_SPACE_VALUES for d in raw):
        raise ValueError(f"shape {raw!r} has a dimension that is not a positive integer")
    if int(np.prod(raw, dtype=object)) > _MAX_SPACE_VALUES:
        raise ValueError(f"shape {raw!r} declares more than {_MAX_SPACE_VALUES} values")
    return tuple(raw)


def gym_space(description: Mapping[str, Any], depth: int = 0) -> spaces.Space[Any]:
    """The gymnasium space a Benchmark spec describes; :class:`ConfigError` for kinds Minari cannot store.

    The description comes from a record, so it is checked before anything is allocated: Box dtypes must be plain
    numbers of at most 64 bits, shapes at most :data:`_MAX_SPACE_VALUES` values, nesting at most 32 levels.
    """
    if not isinstance(description, Mapping):
        raise ConfigError(f"cannot rebuild a space for Minari from {type(description).__name__} (expected an object)")
    if depth > _MAX_SPACE_DEPTH:
        raise ConfigError(
            f"the recorded space nests deeper than {_MAX_SPACE_DEPTH} levels for Minari; use the default --format hf"
        )
    kind = description.get("type")
    try:
        if kind == "Discrete":
            return spaces.Discrete(int(description["n"]), start=int(description.get("start", 0)))
        if kind == "Box":
            dtype, shape = _box_dtype(description["dtype"]), _box_shape(description["shape"])
            low = _box_bound(description["low"], -np.inf, shape)
            high = _box_bound(description["high"], np.inf, shape)
            return spaces.Box(low=low.astype(dtype), high=high.astype(dtype), shape=shape, dtype=dtype)
        if kind == "MultiDiscrete":
            nvec = np.asarray(description["nvec"], dtype=np.int64)
            return spaces.MultiDiscrete(nvec.reshape(_box_shape(description["shape"])))
        if kind == "MultiBinary":
            return spaces.MultiBinary(list(_box_shape(description["n"])))
        if kind == "Tuple":
            return spaces.Tuple([gym_space(s, depth + 1) for s in description["spaces"]])
        if kind == "Dict":
            return spaces.Dict({str(k): gym_space(s, depth + 1) for k, s in description["spaces"].items()})
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as exc:
        shown = _prefix(repr(dict(description)))
        raise ConfigError(f"cannot rebuild the space {shown} for Minari: {exc}") from None
    raise ConfigError(f"Minari export cannot store {_prefix(repr(kind))} spaces; use the default --format hf")


def _prefix(text: str, limit: int = 200) -> str:
    """At most ``limit`` characters of ``text`` (a recorded value quoted in a message)."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


def _values(space: spaces.Space[Any], values: Sequence[Any]) -> Any:
    """Per-step JSON values as Minari's episode buffers want them (structured spaces split per part)."""
    if isinstance(space, spaces.Tuple):
        return tuple(_values(sub, [v[i] for v in values]) for i, sub in enumerate(space.spaces))
    if isinstance(space, spaces.Dict):
        return {key: _values(sub, [v[key] for v in values]) for key, sub in space.spaces.items()}
    array = np.asarray(values, dtype=space.dtype)
    if space.shape is not None and array.shape[1:] != space.shape:
        raise ValueError(f"values of shape {list(array.shape[1:])} where the space declares {list(space.shape)}")
    return array


def _buffer(
    episode_buffer: Any, observation: spaces.Space[Any], action: spaces.Space[Any], trajectory: Trajectory
) -> Any:
    steps = len(trajectory.actions)
    ends = np.zeros(steps, dtype=bool)
    if steps and trajectory.terminated:
        ends[-1] = True
    cuts = np.zeros(steps, dtype=bool)
    if steps and trajectory.truncated:
        cuts[-1] = True
    return episode_buffer(
        observations=_values(observation, list(trajectory.observations[: steps + 1])),
        actions=_values(action, list(trajectory.actions)),
        rewards=list(trajectory.rewards),
        terminations=ends,
        truncations=cuts,
    )


def env_spec_for(spec: Mapping[str, Any] | None) -> EnvSpec | None:
    """The gymnasium ``EnvSpec`` of a gymnasium-backed Benchmark spec, else ``None`` (see the module docstring)."""
    if spec is None:
        return None
    metadata, params = spec.get("metadata"), spec.get("environment_parameters")
    if not isinstance(metadata, Mapping) or metadata.get("source") != "gymnasium" or not isinstance(params, Mapping):
        return None
    gymnasium_id = params.get("gymnasium_id")
    base = registry.get(gymnasium_id) if isinstance(gymnasium_id, str) and ":" not in gymnasium_id else None
    if base is None or not isinstance(base.entry_point, str):
        return None
    try:
        accepted = inspect.signature(load_env_creator(base.entry_point)).parameters
    except (ImportError, AttributeError, TypeError, ValueError):
        return None
    kwargs = {k: v for k, v in params.items() if k in accepted and k != "render_mode"}
    steps = params.get("max_episode_steps")
    limit = steps if isinstance(steps, int) and not isinstance(steps, bool) and steps > 0 else base.max_episode_steps
    return replace(base, kwargs={**base.kwargs, **kwargs}, max_episode_steps=limit)


def _spaces(runs: Sequence[tuple[Ledger, RunFacts]]) -> tuple[str, spaces.Space[Any], spaces.Space[Any]]:
    benchmarks = sorted({facts.benchmark_id for _, facts in runs})
    if len(benchmarks) != 1:
        raise ConfigError(
            f"a Minari dataset holds the steps of one Benchmark, but these Runs use {benchmarks}; export them "
            "separately or use the default --format hf"
        )
    declared = {(str(f.observation_space), str(f.action_space)) for _, f in runs}
    facts = runs[0][1]
    if facts.observation_space is None or facts.action_space is None or len(declared) != 1:
        raise ConfigError(
            "Minari needs the observation and action spaces, but the records do not all describe the same ones "
            "(a Run recorded without them, an evaluation record of a Benchmark not registered here, or different "
            "Benchmark settings); use the default --format hf"
        )
    return benchmarks[0], gym_space(facts.observation_space), gym_space(facts.action_space)


def _episode_metadata(run_id: str, ref: EpisodeRef) -> dict[str, Any]:
    metadata = {
        "run_id": run_id,
        "episode_id": ref.episode_id,
        "submission_id": ref.submission_id,
        "split": ref.split,
        "pool_index": ref.index,
        "status": ref.status,
        "program_digest": ref.program_digest,
        "trajectory_digest": ref.trajectory_digest,
    }
    return {key: value for key, value in metadata.items() if value is not None}  # an Evaluation has no Submission


def write_minari(
    runs: Sequence[tuple[Ledger, RunFacts]],
    root: Path,
    options: ExportOptions,
    *,
    dataset_id: str | None,
    on_episode: Callable[[int, int], None] | None = None,
) -> MinariResult:
    """Write the Runs' steps as a Minari dataset under ``root`` (see the module docstring).

    ``on_episode(done, total)``: once before the first Episode (``done`` 0) and once per Episode written.
    """
    import minari
    from minari.data_collector import EpisodeBuffer
    from minari.dataset.minari_storage import MinariStorage

    benchmark, observation, action = _spaces(runs)
    chosen = dataset_id or default_dataset_id(benchmark, options.visibility)
    if not _ID.match(chosen):
        raise ConfigError(
            f"--minari-id {chosen!r} is malformed; use (namespace/)name-v<version>, e.g. evoledger/cartpole-v0"
        )
    data_path = root / chosen / "data"
    data_path.parent.mkdir(parents=True)
    env_spec = env_spec_for(runs[0][1].spec)
    storage = MinariStorage.new(
        data_path, observation_space=observation, action_space=action, env_spec=env_spec, data_format="arrow"
    )
    storage.update_metadata(
        {
            "dataset_id": chosen,
            "minari_version": minari.__version__,
            "algorithm_name": "evoledger Run Agents",
            "author": {"evoledger"},
            "description": f"Steps of {len(runs)} evoledger Run(s) of Benchmark {benchmark}, exported by "
            f"evoledger {__version__} with visibility {options.visibility!r}.",
        }
    )
    episodes = steps = 0
    splits: dict[str, tuple[int, int]] = {}
    metadata: list[dict[str, Any]] = []
    total = 0 if on_episode is None else episode_count(runs, options.visibility)
    if on_episode is not None:
        on_episode(0, total)
    for ledger, facts in runs:
        for ref in episode_refs(ledger, facts, options.visibility):
            trajectory = load_trajectory(ledger, ref.trajectory_digest, ref.where(facts.run_id))
            if len(trajectory.observations) != len(trajectory.actions) + 1:
                raise SchemaError(
                    f"{ref.where(facts.run_id)}: {len(trajectory.observations)} observations for "
                    f"{len(trajectory.actions)} actions; Minari needs one more observation than actions"
                )
            try:
                buffer = _buffer(EpisodeBuffer, observation, action, trajectory)
            except (KeyError, IndexError, TypeError, ValueError, OverflowError) as exc:
                raise SchemaError(
                    f"{ref.where(facts.run_id)}: its recorded steps do not fit the declared spaces for Minari "
                    f"({_prefix(str(exc))}); export with the default --format hf"
                ) from None
            storage.update_episodes([buffer])
            metadata.append(_episode_metadata(facts.run_id, ref))
            episodes += 1
            steps += len(trajectory.actions)
            seen, stepped = splits.get(ref.split, (0, 0))
            splits[ref.split] = (seen + 1, stepped + len(trajectory.actions))
            if on_episode is not None:
                on_episode(episodes, total)
            if len(metadata) >= _METADATA_CHUNK:
                storage.update_episode_metadata(metadata, range(episodes - len(metadata), episodes))
                metadata = []
    if metadata:
        storage.update_episode_metadata(metadata, range(episodes - len(metadata), episodes))
    return MinariResult(chosen, data_path, episodes, steps, splits, env_spec.id if env_spec is not None else None)
