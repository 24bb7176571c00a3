"""Declarative node parameters: one table per node, used to declare, validate and document them.

The nodes declare their ROS parameters from these tables, and the README's
parameter reference is generated from the same tables, so the two cannot drift.
This module has no ROS dependency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["ParameterError", "ParameterSpec", "check_choice", "check_positive", "check_vector", "markdown_table"]

_TYPES = ("double", "integer", "string", "bool", "double_array", "string_array")


class ParameterError(ValueError):
    """A parameter has a bad value; the message names the parameter and what is allowed."""


@dataclass(frozen=True)
class ParameterSpec:
    """One node parameter: name, type, default (None: unset), unit and description."""

    name: str
    type: str
    default: Any
    description: str
    unit: str = ""

    def __post_init__(self) -> None:
        if self.type not in _TYPES:
            raise ValueError(f"parameter {self.name}: type must be one of {_TYPES}")


def markdown_table(specs: tuple[ParameterSpec, ...]) -> str:
    """The parameter table of a node in Markdown (for the README)."""
    rows = ["| parameter | type | default | unit | description |", "|---|---|---|---|---|"]
    for s in specs:
        default = "(unset)" if s.default is None or s.default == [] else f"`{s.default}`"
        rows.append(f"| `{s.name}` | {s.type} | {default} | {s.unit} | {s.description} |")
    return "\n".join(rows)


def check_positive(name: str, value: float, *, allow_zero: bool = False, upper: float | None = None) -> float:
    """Return ``value`` as float if it is a finite positive number (and ≤ upper), else raise."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"parameter {name!r} must be a number, got {value!r}") from None
    low_ok = v >= 0 if allow_zero else v > 0
    if not math.isfinite(v) or not low_ok or (upper is not None and v > upper):
        bound = ">= 0" if allow_zero else "> 0"
        rng = f"{bound} and <= {upper}" if upper is not None else bound
        raise ParameterError(f"parameter {name!r} = {value!r} is out of range: must be {rng}")
    return v


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ParameterError(f"parameter {name!r} = {value!r} is not allowed: choose one of {', '.join(choices)}")
    return value


def check_vector(name: str, values, n: int, *, positive: bool = False, default=None) -> list[float] | None:
    """Validate a per-joint vector parameter: empty → ``default``; else exactly n finite values."""
    if values is None or len(values) == 0:
        return None if default is None else [float(v) for v in default]
    vals = [float(v) for v in values]
    if len(vals) != n:
        raise ParameterError(f"parameter {name!r} has {len(vals)} values, expected {n} (one per joint)")
    if not all(math.isfinite(v) for v in vals):
        raise ParameterError(f"parameter {name!r} contains NaN or inf: {vals}")
    if positive and any(v <= 0 for v in vals):
        raise ParameterError(f"parameter {name!r} must be > 0 for every joint, got {vals}")
    return vals
