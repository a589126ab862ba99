"""Baseline Policy for ``atcoder/ahc054-treants-forest``: never place a treant (the adventurer walks unhindered)."""

from typing import Any


class Policy:
    def act(self, observation: Any) -> dict[str, list[list[int]]]:
        return {"placements": []}


def make_policy(context: Any) -> Policy:
    return Policy()
