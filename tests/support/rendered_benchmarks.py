"""Benchmarks with visual evidence turned on, loadable by import string (``evoledger run <module>:<factory>``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from evoledger.benchmarks.classic_control import CartPole, make_cartpole
from evoledger.benchmarks.visual_evidence import VisualEvidence


def make_rendered_cartpole(**config: Any) -> CartPole:
    """CartPole whose training Feedback carries contact sheets (2 Episodes, 8 frames each)."""
    plain = make_cartpole(**config)
    return CartPole(dataclasses.replace(plain.task, visual_evidence=VisualEvidence(episodes=2, frames=8)))
