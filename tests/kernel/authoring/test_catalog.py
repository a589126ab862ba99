"""Extras declared by Benchmark families: found without importing, and a one-line install hint when missing."""

from __future__ import annotations

import pytest
from evoledger.kernel.authoring import CatalogEntry, Extra
from evoledger.ledger.errors import ConfigError, MissingExtraError


def test_an_installed_extra_is_found_without_error() -> None:
    extra = Extra("core", ("json", "numpy"))
    assert extra.installed
    assert extra.missing_module() is None
    extra.require("core/thing")


def test_a_missing_extra_names_the_module_and_the_exact_install_command() -> None:
    extra = Extra("mujoco", ("json", "evoledger_no_such_module_xyz"))
    assert not extra.installed
    assert extra.missing_module() == "evoledger_no_such_module_xyz"
    with pytest.raises(MissingExtraError) as caught:
        extra.require("mujoco/half-cheetah")
    assert isinstance(caught.value, ConfigError)
    message = str(caught.value)
    assert "mujoco/half-cheetah" in message
    assert "pip install 'evoledger[mujoco]'" in message
    assert "\n" not in message
    assert caught.value.extra == "mujoco"


def test_a_dotted_module_under_a_missing_package_counts_as_missing() -> None:
    assert Extra("x", ("evoledger_no_such_pkg.sub",)).missing_module() == "evoledger_no_such_pkg.sub"


def test_catalog_entries_are_plain_frozen_data() -> None:
    entry = CatalogEntry("box2d/lunar-lander", "box2d", "LunarLander-v3", Extra("box2d", ("Box2D",)), ("lunar",))
    with pytest.raises(AttributeError):
        entry.name = "other"  # type: ignore[misc]
    assert entry.extra is not None
    assert entry.extra.install_command == "pip install 'evoledger[box2d]'"
