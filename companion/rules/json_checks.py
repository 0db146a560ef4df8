"""Checked readers of JSON values: each raises :class:`~companion.rules.actions.FormatError`
naming the field path (``wizards.blue-2.tier``) when the value has the wrong type or range."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.rules.actions import FormatError


def as_object(v: Any, where: str) -> Mapping[str, Any]:
    """:raises FormatError: ``v`` is not a JSON object."""
    if not isinstance(v, Mapping):
        raise FormatError(where, "expected an object")
    return v


def as_int(v: Any, where: str, lo: int | None = None, hi: int | None = None) -> int:
    """``v`` as an integer within ``lo..hi`` (each optional; a bool is not an integer).

    :raises FormatError: otherwise."""
    if not isinstance(v, int) or isinstance(v, bool):
        raise FormatError(where, "expected an integer")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f"{lo if lo is not None else ''}..{hi if hi is not None else ''}"
        raise FormatError(where, f"{v} is outside {rng}")
    return v


def as_bool(v: Any, where: str) -> bool:
    """:raises FormatError: ``v`` is not true or false."""
    if not isinstance(v, bool):
        raise FormatError(where, "expected true or false")
    return v


def as_str(v: Any, where: str) -> str:
    """:raises FormatError: ``v`` is not a string."""
    if not isinstance(v, str):
        raise FormatError(where, "expected a string")
    return v


def as_list(v: Any, where: str) -> list[Any]:
    """:raises FormatError: ``v`` is not a JSON array."""
    if not isinstance(v, list):
        raise FormatError(where, "expected a list")
    return v


def required(d: Mapping[str, Any], key: str, where: str) -> Any:
    """``d[key]``.

    :raises FormatError: the field is missing."""
    if key not in d:
        raise FormatError(f"{where}.{key}" if where else key, "missing")
    return d[key]


def no_extra(d: Mapping[str, Any], allowed: set[str], where: str) -> None:
    """:raises FormatError: ``d`` has a field outside ``allowed`` (named in the message)."""
    extra = set(d) - allowed
    if extra:
        name = sorted(extra)[0]
        raise FormatError(f"{where}.{name}" if where else name, "unknown field")
