"""Heuristic Policy for ``vizdoom/basic-notifications``: read which monster to shoot, find it by colour, aim, shoot.

Three monsters stand against the far wall in a shuffled order; on the third step the ``notifications`` string says
which one to shoot (``Shoot: Cacodemon``, ``Shoot: Demon`` or ``Shoot: DoomImp``), once, so the Policy remembers
it. Perception, on the wall band of the screen (rows 90-155): the Cacodemon is the blue one (blue exceeds red by
30), the Demon the light-pink one (red at least 130 and 60 above green, green and blue within 8), the DoomImp the
black one (all channels at most 20 and within 4 of each other). The target's column is the weighted mean of its
pixels within 12 columns of the densest 15-column window (needing at least 12 pixels there). Control: NOOP until
the name is known; then ATTACK when the target is within 4 pixels of the centre column (160), else strafe towards
it (MOVE_LEFT / MOVE_RIGHT); if it is out of view, keep strafing the way it was last seen. Actions are found by name
in ``context.metadata["actions"]``.
"""

from typing import Any

import numpy as np

CENTRE = 160.0
AIM = 4.0
WINDOW = 15
MIN_PIXELS = 12


def _masks(screen: Any) -> dict[str, Any]:
    band = np.asarray(screen, dtype=np.int16)[90:155]
    r, g, b = band[..., 0], band[..., 1], band[..., 2]
    high, low = band.max(axis=-1), band.min(axis=-1)
    return {
        "cacodemon": (b - r) > 30,
        "demon": (r >= 130) & (r - g >= 60) & (np.abs(g - b) <= 8),
        "doomimp": (high <= 20) & (high - low <= 4),
    }


def _column(mask: Any) -> float | None:
    """The target's column: where its pixels are densest, or None when too few are in view."""
    profile = mask.sum(axis=0).astype(np.float64)
    dense = np.convolve(profile, np.ones(WINDOW), mode="same")
    peak = int(dense.argmax())
    if dense[peak] < MIN_PIXELS:
        return None
    lo, hi = max(peak - 12, 0), peak + 13
    weights = profile[lo:hi]
    return float((np.arange(lo, lo + weights.size) * weights).sum() / weights.sum())


class Marksman:
    def __init__(self, actions: list[str]) -> None:
        self.attack = actions.index("attack")
        self.left = actions.index("move_left")
        self.right = actions.index("move_right")
        self.target: str | None = None
        self.last = self.right

    def act(self, observation: Any) -> int:
        message = str(observation.get("notifications") or "")
        if "Shoot:" in message:
            self.target = message.split("Shoot:", 1)[1].strip().lower()
        if self.target is None:
            return 0
        mask = _masks(observation["screen"]).get(self.target)
        column = None if mask is None else _column(mask)
        if column is None:
            return self.last
        offset = column - CENTRE
        if abs(offset) <= AIM:
            return self.attack
        self.last = self.right if offset > 0 else self.left
        return self.last


def make_policy(context: Any) -> Any:
    return Marksman(list(context.metadata["actions"]))
