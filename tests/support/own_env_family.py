"""A Benchmark family with its own environment, installed the way a third-party package installs one.

:func:`install_own_env_family` writes, under a folder:

* ``site/``: a distribution (``*.dist-info`` with an ``evoledger.benchmarks`` entry point) and its family module,
  whose :class:`~evoledger.kernel.authoring.Extra` ``own-env-test`` declares an
  :class:`~evoledger.kernel.authoring.OwnEnvironment`: ``gymnasium==1.2.0`` (the main environment has a later one)
  and a probe package, a local wheel (``wheels/``: installed offline, from a file);
* ``shared/``: the probe package's module as a plain folder: put it on ``PYTHONPATH`` and the family's modules
  import in the main environment, so its workers stay there (the shared path).

The family's one Benchmark, ``own-env/versions``, is the toy counter cut to one step whose reward reports where its
Environment ran: ``100`` if in a venv, plus gymnasium's minor version (``102``: the family venv with gymnasium 1.2;
``4``: the main environment with gymnasium 1.4); its Feedback content's ``host`` says the same of the Host, which
makes it. Its Host side (spec, spaces, Episodes, Feedback, Programs) builds
without the probe package, as an own-environment family's must; only ``make_environment`` imports it.
"""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["OWN_ENV_FAMILY", "OWN_ENV_NAME", "OwnEnvFamily", "install_own_env_family", "reward_for"]

OWN_ENV_NAME = "own-env/versions"
OWN_ENV_FAMILY = "own-env-test"
VENV_GYMNASIUM = "1.2.0"
_PROBE = "evoledger_own_env_probe"
_FAMILY_MODULE = "evoledger_own_env_family"

_SOURCE = '''
"""A family whose workers run in a venv of their own (tests/support/own_env_family.py)."""

import sys
from typing import Any

import gymnasium

from evoledger.kernel.authoring import CatalogEntry, Extra, Feedback, OwnEnvironment, Step

REQUIREMENTS = {requirements!r}
EXTRA = Extra(
    {family!r},
    ({probe!r},),
    own_environment=OwnEnvironment(REQUIREMENTS, "tests: pins gymnasium {venv_gymnasium}, older than the main one"),
)


def where() -> float:
    """100 in a venv, plus gymnasium's minor version: what the Environment reports as its reward."""
    return (100.0 if sys.prefix != sys.base_prefix else 0.0) + float(gymnasium.__version__.split(".")[1])


class _Reporting:
    def __init__(self, base: Any) -> None:
        self._base = base

    def reset(self) -> Any:
        return self._base.reset()

    def step(self, action: Any) -> Step:
        done = self._base.step(action)
        return Step(done.observation, where(), True, False, dict(done.metrics))

    def close(self) -> None:
        self._base.close()


class _Versions:
    """The toy counter, one step long, under the spec id {name!r}; its reward says where it ran."""

    def __init__(self, base: Any) -> None:
        self._base = base

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)

    @property
    def spec(self) -> Any:
        return self._base.spec.model_copy(update={{"id": {name!r}}})

    def feedback(self, records: Any) -> Feedback:
        """The toy counter's, plus where the Host (which runs feedback()) ran: ``host`` as ``where()`` reports it."""
        base = self._base.feedback(records)
        return Feedback(base.score, {{**base.content, "host": where()}}, base.artifacts)

    def make_environment(self, episode: Any, **options: Any) -> Any:
        import {probe}  # noqa: F401  (the family's heavy package: only in its venv, or on PYTHONPATH)

        return _Reporting(self._base.make_environment(episode))


def make_versions(**config: Any) -> Any:
    EXTRA.require({name!r})
    from evoledger.benchmarks.toy import make_toy_counter

    return _Versions(make_toy_counter(**{{"max_episode_steps": 1, **config}}))


BENCHMARKS = {{{name!r}: make_versions}}
CATALOG = (CatalogEntry({name!r}, "own-env", "reports where its Environment ran", EXTRA),)
'''


@dataclass(frozen=True)
class OwnEnvFamily:
    site: Path
    """The folder holding the distribution and the family module (put it on ``PYTHONPATH``)."""
    shared: Path
    """The folder holding the probe module: on ``PYTHONPATH`` too, the family shares the main environment."""
    requirements: tuple[str, ...]

    def pythonpath(self, *, shared: bool = False) -> str:
        """A ``PYTHONPATH`` for a subprocess: this one's, the family, and the probe module too if ``shared``."""
        inherited = [part for part in os.environ.get("PYTHONPATH", "").split(os.pathsep) if part]
        return os.pathsep.join([*inherited, str(self.site), *([str(self.shared)] if shared else [])])


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_probe_wheel(folder: Path) -> Path:
    """A one-module pure-Python wheel, built by hand (no build backend, no network)."""
    folder.mkdir(parents=True)
    dist = f"{_PROBE}-0.1.dist-info"
    files = {
        f"{_PROBE}.py": b'WHERE = "installed"\n',
        f"{dist}/METADATA": b"Metadata-Version: 2.1\nName: evoledger-own-env-probe\nVersion: 0.1\n",
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: evoledger-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "\n".join([*(_record_line(n, d) for n, d in files.items()), f"{dist}/RECORD,,"]) + "\n"
    wheel = folder / f"{_PROBE}-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"{dist}/RECORD", record)
    return wheel


def install_own_env_family(root: Path) -> OwnEnvFamily:
    """Write the family's distribution, module, probe wheel and shared probe folder under ``root``."""
    site, shared = root / "site", root / "shared"
    wheel = _write_probe_wheel(root / "wheels")
    requirements = (f"gymnasium=={VENV_GYMNASIUM}", f"evoledger-own-env-probe @ {wheel.as_uri()}")
    dist = site / f"{_FAMILY_MODULE}-0.1.dist-info"
    dist.mkdir(parents=True)
    shared.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: evoledger-own-env-family\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[evoledger.benchmarks]\nown-env = {_FAMILY_MODULE}\n")
    source = _SOURCE.format(
        requirements=requirements, family=OWN_ENV_FAMILY, probe=_PROBE, venv_gymnasium=VENV_GYMNASIUM, name=OWN_ENV_NAME
    )
    (site / f"{_FAMILY_MODULE}.py").write_text(source, encoding="utf-8")
    (shared / f"{_PROBE}.py").write_text('WHERE = "shared"\n', encoding="utf-8")
    return OwnEnvFamily(site, shared, requirements)


def reward_for(*, venv: bool, gymnasium_version: str) -> float:
    """The reward ``own-env/versions`` reports when its Environment ran there."""
    return (100.0 if venv else 0.0) + float(gymnasium_version.split(".")[1])
