"""An AHC057 heuristic: groups of 30 neighbours, each bonded along its minimum spanning tree when it is tightest.

On turn 0 the Policy predicts every point's position at candidate turns (``turn_stride`` apart: a point moves by
its own velocity until bonded). At each candidate turn it orders the points along a Hilbert curve (the torus origin
moved by ``origins`` offsets, the order rotated by steps of ``shift_step``), cuts the order into 10 runs of 30 and
prices each run by its toroidal minimum spanning tree; the cheapest grouping over all candidates is kept. Then each
group gets its own best candidate turn, and at that turn the Policy bonds the group along the tree of its actual
positions. Parameters live in ``params.json`` (tuned by ``hill-climb``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

ORDER_BITS = 8


def _hilbert_index(cells: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The Hilbert-curve index of integer cells ``(n, 2)`` on a ``2**ORDER_BITS`` grid (vectorised xy2d)."""
    x = cells[:, 0].copy()
    y = cells[:, 1].copy()
    d = np.zeros(len(cells), dtype=np.int64)
    s = 1 << (ORDER_BITS - 1)
    while s > 0:
        rx = (x & s) > 0
        ry = (y & s) > 0
        d += s * s * ((3 * rx) ^ ry)
        flip = ~ry
        swap_x = np.where(flip & rx, s - 1 - x, x)
        swap_y = np.where(flip & rx, s - 1 - y, y)
        x = np.where(flip, swap_y, swap_x)
        y = np.where(flip, swap_x, swap_y)
        s >>= 1
    return d


def _distances(points: np.ndarray[Any, Any], side: float) -> np.ndarray[Any, Any]:
    """Toroidal distance matrices of ``points`` shaped ``(..., k, 2)``: ``(..., k, k)``."""
    delta = np.abs(points[..., :, None, :] - points[..., None, :, :])
    delta = np.minimum(delta, side - delta)
    distances: np.ndarray[Any, Any] = np.sqrt((delta * delta).sum(axis=-1))
    return distances


def _mst(distances: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Prim on a batch ``(g, k, k)``: total cost ``(g,)`` and each vertex's parent ``(g, k)`` (vertex 0: root)."""
    groups, k, _ = distances.shape
    rows = np.arange(groups)
    in_tree = np.zeros((groups, k), dtype=bool)
    in_tree[:, 0] = True
    best = distances[:, 0, :].copy()
    parent = np.zeros((groups, k), dtype=np.int64)
    total = np.zeros(groups)
    for _ in range(k - 1):
        candidates = np.where(in_tree, np.inf, best)
        nxt = candidates.argmin(axis=1)
        total += np.floor(candidates[rows, nxt] + 0.5)
        in_tree[rows, nxt] = True
        closer = distances[rows, nxt, :] < best
        parent = np.where(closer & ~in_tree, nxt[:, None], parent)
        best = np.minimum(best, distances[rows, nxt, :])
    return total, parent


class GroupingPolicy:
    def __init__(self, turn_stride: int, shift_step: int, origins: int) -> None:
        self.turn_stride = turn_stride
        self.shift_step = shift_step
        self.origins = origins
        self.plan: dict[int, list[np.ndarray[Any, Any]]] = {}

    def act(self, observation: dict[str, Any]) -> dict[str, list[list[int]]]:
        turn = observation["turn"]
        if observation["initial"] is not None:
            self._make_plan(observation)
        bonds: list[list[int]] = []
        for group in self.plan.pop(turn, []):
            positions = np.asarray(observation["positions"], dtype=np.float64)[group]
            _, parent = _mst(_distances(positions, self.side)[None])
            bonds.extend([int(group[v]), int(group[parent[0, v]])] for v in range(1, len(group)))
        return {"bonds": bonds}

    def _make_plan(self, observation: dict[str, Any]) -> None:
        initial = observation["initial"]
        self.side = float(initial["space_size"])
        size, count, turns = initial["target_size"], initial["target_components"], initial["turns"]
        start = np.asarray(observation["positions"], dtype=np.float64)
        velocity = np.asarray(observation["velocities"], dtype=np.float64)
        candidates = list(range(0, turns, self.turn_stride))
        cell = self.side / (1 << ORDER_BITS)
        best: tuple[float, np.ndarray[Any, Any]] | None = None
        at_turn = {t: np.mod(start + velocity * t, self.side) for t in candidates}
        for t in candidates:
            positions = at_turn[t]
            for o in range(self.origins):
                offset = self.side * o / max(self.origins, 1) / 2
                cells = (np.mod(positions + offset, self.side) / cell).astype(np.int64).clip(0, (1 << ORDER_BITS) - 1)
                order = np.argsort(_hilbert_index(cells), kind="stable")
                for shift in range(0, size, self.shift_step):
                    groups = np.roll(order, -shift).reshape(count, size)
                    total, _ = _mst(_distances(positions[groups], self.side))
                    if best is None or total.sum() < best[0]:
                        best = (float(total.sum()), groups)
        if best is None:
            raise RuntimeError("no candidate grouping (turns must be at least 1)")
        self.plan = {}
        stacked = np.stack([at_turn[t] for t in candidates])  # (turns, points, 2)
        for group in best[1]:
            costs, _ = _mst(_distances(stacked[:, group], self.side))
            self.plan.setdefault(candidates[int(costs.argmin())], []).append(group)


def make_policy(context: Any) -> GroupingPolicy:
    params = json.loads((Path(__file__).parent / "params.json").read_text(encoding="utf-8"))
    stride = int(min(max(round(params["turn_stride"]), 1), 999))
    shift = int(min(max(round(params["shift_step"]), 1), 30))
    origins = int(min(max(round(params["origins"]), 1), 8))
    return GroupingPolicy(stride, shift, origins)
