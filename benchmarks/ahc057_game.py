"""AtCoder AHC057 A "Molecules": an independent case generator and simulator of the public rules (numpy).

No AtCoder statement text, tool or input is included; the rules are the published problem's, the generator is the
reference harness's own, drawn from :class:`~.contest_stream.CaseStream`.

* 300 points on a torus of side ``L = 100_000``, 1,000 turns; the goal is 10 components of 30 points.
* Case (domain ``evopolicygym-molecules/generator/v1\\0``): for each point in order ``x = below(L)``,
  ``y = below(L)``, ``vx = -100 + below(201)``, ``vy = -100 + below(201)``; positions are doubles from then on.
* A turn: a set of bonds ``(i, j)``, processed in sorted order (each pair as ``(min, max)``). A bond must join two
  different components as they are at that moment (after the bonds before it in the same turn) into one of at most
  30 points; it costs the nearest integer (``floor(d + 0.5)``) of the toroidal Euclidean distance ``d`` between
  the two points at their current (pre-move) positions; the merged component moves with the size-weighted mean of
  the two velocities. After the bonds at least 10 components must remain, and on the last turn (index 999) the
  partition must be exactly 10 components of 30. Any violation rejects the whole set (nothing changes). Then,
  except after the last turn, every point moves by its component's velocity, coordinates taken modulo ``L``.
* Score of a case: ``round(1_000_000 * log2(L * (300 - 10) / (total_cost + 1)))`` (Python's ``round``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from evoledger.benchmarks.contest_stream import CaseStream, nearest

__all__ = [
    "COMPONENTS",
    "COMPONENT_SIZE",
    "DOMAIN",
    "POINTS",
    "SIDE",
    "TURNS",
    "IllegalBonds",
    "MoleculesCase",
    "MoleculesGame",
    "case_score",
    "generate_case",
    "toroidal_distance",
]

DOMAIN: Final = b"evopolicygym-molecules/generator/v1\0"
POINTS: Final = 300
TURNS: Final = 1_000
SIDE: Final = 100_000
COMPONENTS: Final = 10
COMPONENT_SIZE: Final = 30
MAX_SPEED: Final = 100


class IllegalBonds(ValueError):
    """A set of bonds the rules refuse (the message names the first broken rule)."""


@dataclass(frozen=True, slots=True)
class MoleculesCase:
    """One case: integer start positions and velocities, one ``(x, y)`` / ``(vx, vy)`` per point."""

    positions: tuple[tuple[int, int], ...]
    velocities: tuple[tuple[int, int], ...]


def generate_case(case_seed: int) -> MoleculesCase:
    """The case of ``case_seed`` (see the module docstring for the draws, in order)."""
    stream = CaseStream(DOMAIN, case_seed)
    positions, velocities = [], []
    for _ in range(POINTS):
        x, y = stream.below(SIDE), stream.below(SIDE)
        vx, vy = -MAX_SPEED + stream.below(2 * MAX_SPEED + 1), -MAX_SPEED + stream.below(2 * MAX_SPEED + 1)
        positions.append((x, y))
        velocities.append((vx, vy))
    return MoleculesCase(tuple(positions), tuple(velocities))


def toroidal_distance(a: Sequence[float], b: Sequence[float]) -> float:
    """The Euclidean distance between two points of the torus of side :data:`SIDE`."""
    dx = abs(float(a[0]) - float(b[0]))
    dy = abs(float(a[1]) - float(b[1]))
    dx = min(dx, SIDE - dx)
    dy = min(dy, SIDE - dy)
    return math.sqrt(dx * dx + dy * dy)


def case_score(total_cost: int) -> int:
    """A case's score for the total bond cost."""
    return round(1_000_000 * math.log2(SIDE * (POINTS - COMPONENTS) / (total_cost + 1)))


class MoleculesGame:
    """The state of one case in play; :meth:`play` applies one turn."""

    def __init__(self, case: MoleculesCase) -> None:
        self.case = case
        self.positions = np.array(case.positions, dtype=np.float64)
        self.velocities = np.array(case.velocities, dtype=np.float64)
        """Per point: its component's velocity."""
        self.components = np.arange(POINTS, dtype=np.int64)
        """Per point: the smallest point index of its component."""
        self.sizes: dict[int, int] = dict.fromkeys(range(POINTS), 1)
        """Per component (by its smallest index): its size."""
        self.members: dict[int, list[int]] = {i: [i] for i in range(POINTS)}
        self.turn = 0
        self.total_cost = 0
        self.bonds = 0

    @property
    def done(self) -> bool:
        return self.turn >= TURNS

    @property
    def component_count(self) -> int:
        return len(self.sizes)

    def play(self, bonds: Sequence[tuple[int, int]]) -> list[int]:
        """One turn: the bonds, then the move. Returns each bond's cost in processing order.

        Raises :class:`IllegalBonds` (nothing changed) if the set breaks a rule.
        """
        if self.done:
            raise RuntimeError("the game is over")
        costs = self._bond(sorted((min(i, j), max(i, j)) for i, j in bonds)) if bonds else []
        if not bonds and self.turn == TURNS - 1:
            self._check_final(self.sizes)
        if self.turn < TURNS - 1:
            self.positions += self.velocities
            np.mod(self.positions, SIDE, out=self.positions)
        self.turn += 1
        return costs

    def _check_final(self, sizes: dict[int, int]) -> None:
        if len(sizes) != COMPONENTS or any(size != COMPONENT_SIZE for size in sizes.values()):
            raise IllegalBonds(
                f"on the last turn the points must form exactly {COMPONENTS} components of {COMPONENT_SIZE}; "
                f"after these bonds there are {len(sizes)} components, sizes {sorted(sizes.values())[:12]}"
            )

    def _bond(self, bonds: list[tuple[int, int]]) -> list[int]:
        root = self.components.tolist()
        sizes = dict(self.sizes)
        members: dict[int, list[int]] = {}
        velocity: dict[int, tuple[float, float]] = {}
        positions = self.positions
        costs = []
        for i, j in bonds:
            a, b = root[i], root[j]
            if a == b:
                raise IllegalBonds(f"bond ({i}, {j}) joins points already in one component")
            merged = sizes[a] + sizes[b]
            if merged > COMPONENT_SIZE:
                raise IllegalBonds(
                    f"bond ({i}, {j}) would make a component of {merged} points; at most {COMPONENT_SIZE} are allowed"
                )
            costs.append(nearest(toroidal_distance(positions[i], positions[j])))
            keep, gone = (a, b) if a < b else (b, a)
            va = velocity.get(a) or tuple(self.velocities[i].tolist())
            vb = velocity.get(b) or tuple(self.velocities[j].tolist())
            sa, sb = sizes[a], sizes[b]
            velocity[keep] = ((sa * va[0] + sb * vb[0]) / merged, (sa * va[1] + sb * vb[1]) / merged)
            velocity.pop(gone, None)
            kept = members.get(keep) or list(self.members[keep])
            moved = members.pop(gone, None) or self.members[gone]
            for point in moved:
                root[point] = keep
            kept.extend(moved)
            members[keep] = kept
            sizes[keep] = merged
            del sizes[gone]
        if len(sizes) < COMPONENTS:
            raise IllegalBonds(f"after these bonds {len(sizes)} components remain; at least {COMPONENTS} must")
        if self.turn == TURNS - 1:
            self._check_final(sizes)
        for component, points in members.items():
            self.members[component] = points
            self.velocities[points] = velocity[component]
        for component in self.members.keys() - sizes.keys():
            del self.members[component]
        self.components[:] = root
        self.sizes = sizes
        self.total_cost += sum(costs)
        self.bonds += len(bonds)
        return costs

    def observation_arrays(self) -> dict[str, Any]:
        """Copies of the per-point arrays an observation holds."""
        return {
            "positions": self.positions.copy(),
            "velocities": self.velocities.copy(),
            "components": self.components.copy(),
        }
