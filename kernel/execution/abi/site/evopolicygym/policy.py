"""``evopolicygym.policy`` as evoledger provides it to a Program run with ``--policy-abi evopolicygym``.

This folder is put on the Policy process's ``sys.path`` only when that ABI is selected (never installed into
site-packages), so a Program written for EvoPolicyGym 0.3 imports it unchanged::

    from evopolicygym.policy import PolicyContext, PolicyValue, TensorValue

Values crossing the Policy boundary (``PolicyValue``) are ``None``, ``bool``, ``int`` (64-bit), finite ``float``,
``str``, ``bytes``, ``list``, ``tuple``, ``dict`` with ``str`` keys, and :class:`TensorValue`: a dense tensor as
little-endian bytes of one of the dtypes in :data:`TENSOR_DTYPES`. Standard library only.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, Union

__all__ = ["TENSOR_DTYPES", "PolicyContext", "PolicyValue", "TensorValue", "tensor_problem"]

TENSOR_DTYPES: dict[str, int] = {
    "bool": 1,
    "uint8": 1,
    "uint16": 2,
    "uint32": 4,
    "uint64": 8,
    "int8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "float16": 2,
    "float32": 4,
    "float64": 8,
}
"""Every dtype a :class:`TensorValue` may have, with its item size in bytes."""

_FLOAT_FORMATS = {"float16": "<e", "float32": "<f", "float64": "<d"}


@dataclass(frozen=True, slots=True)
class TensorValue:
    """A dense tensor: ``dtype`` (a name in :data:`TENSOR_DTYPES`), ``shape`` and its little-endian C-order bytes.

    Checked when made: a known dtype, a tuple of non-negative ints as the shape, exactly ``prod(shape) * itemsize``
    bytes, bool items 0 or 1, finite floats.
    """

    dtype: str
    shape: tuple[int, ...]
    data: bytes

    def __post_init__(self) -> None:
        problem = tensor_problem(self.dtype, self.shape, self.data)
        if problem is not None:
            raise ValueError(f"invalid TensorValue: {problem}")


def tensor_problem(dtype: object, shape: object, data: object) -> str | None:
    """What is wrong with a tensor of these fields, or None if nothing is."""
    if type(dtype) is not str or dtype not in TENSOR_DTYPES:
        return f"dtype {dtype!r:.40} is not one of {', '.join(TENSOR_DTYPES)}"
    if type(shape) is not tuple or any(type(size) is not int or size < 0 for size in shape):
        return f"shape {shape!r:.80} is not a tuple of non-negative ints"
    if type(data) is not bytes:
        return f"data is a {type(data).__name__}, not bytes"
    expected = math.prod(shape) * TENSOR_DTYPES[dtype]
    if len(data) != expected:
        return f"data holds {len(data)} bytes; dtype {dtype} and shape {shape} need {expected}"
    if dtype == "bool" and data.strip(b"\x00\x01"):
        return "a bool tensor holds a byte other than 0 or 1"
    float_format = _FLOAT_FORMATS.get(dtype)
    if float_format is not None and not all(math.isfinite(v) for (v,) in struct.iter_unpack(float_format, data)):
        return "a float tensor holds a NaN or an infinity"
    return None


PolicyValue: TypeAlias = Union[
    bool,
    int,
    float,
    str,
    bytes,
    TensorValue,
    "list[PolicyValue]",
    "tuple[PolicyValue, ...]",
    "dict[str, PolicyValue]",
    None,
]
"""What may cross the Policy boundary: an observation, an action, a space description or a metadata value."""


@dataclass(frozen=True, slots=True)
class PolicyContext:
    """What ``make_policy(context)`` receives: the public description of the Benchmark, and the Policy's seed.

    ``observation_space`` / ``action_space`` describe the values ``act`` receives and returns, as plain data;
    ``metadata`` and ``environment_parameters`` are the Benchmark's public fields; ``policy_seed`` is an unsigned
    64-bit seed for the Policy's own randomness.
    """

    observation_space: PolicyValue
    action_space: PolicyValue
    metadata: Mapping[str, Any]
    environment_parameters: Mapping[str, Any]
    policy_seed: int
