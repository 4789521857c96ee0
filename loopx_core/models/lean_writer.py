"""The runtime of the generated lean writers: JSON text exactly as pydantic serialises a model.

Hand-written and shared by the generated writers' modules (loopx_core/models/lean_dump.py and
each plugin's lean_dump.py, by scripts/gen_lean_readers.py, imported on a class's first write,
so a read never loads them). Each generated class then carries `_lean_write`: its writers for
`model_dump_json(indent=2)` (pretty), `model_dump_json(exclude_none=...)` (compact) and
`model_dump(mode="json", exclude_none=...)` (json); the functions here write fields and
containers (the entry points, `dumps` and the rest, are lean_runtime's). Standard library only. A value pydantic's twin could not hold with the field's
type (a str where an int goes, NaN, a lone surrogate in JSON text, an unknown type in a free
JSON object) raises `Doubt`: the caller asks pydantic. tests/test_lean_writers.py proves the
bytes equal pydantic's on generated models.
"""

from __future__ import annotations

try:  # json's C encoder, without json.encoder's regexes: serde's escapes exactly
    from _json import encode_basestring as _quote
except ImportError:  # pragma: no cover - an interpreter without json's accelerator
    from json.encoder import encode_basestring as _quote

from loopx_core.datetimes import datetime as _datetime
from loopx_core.models.lean_runtime import Doubt

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Pretty = Callable[[Any, str], str]
    Compact = Callable[[Any, bool], str]
    Json = Callable[[Any, bool], Any]

_SAFE_INT = 2**53
"""Largest int a float field takes as its float (the lean checkers' bound): beyond, doubt."""


def _float_text(value: float) -> str:
    """A finite float as pydantic writes it: Python's shortest digits, its exponent without
    zero padding (`1e-7`, `1e+16`), and decimal down to 1e-5 (`0.00001`, where repr has `1e-05`)."""
    text = repr(value)
    if "e" not in text:
        if text[-1] in "fn":  # inf, -inf, nan: no JSON (no model holds one)
            raise Doubt
        return text
    mantissa, exponent = text.split("e")
    power = int(exponent)
    if power == -5:
        sign = "-" if mantissa[0] == "-" else ""
        return sign + "0.0000" + mantissa.lstrip("-").replace(".", "")
    return mantissa + ("e+" if power > 0 else "e-") + str(abs(power))


def _time_text(value: _datetime) -> str:
    """A datetime as pydantic writes it: ISO 8601, microseconds only when set, `Z` for a zero
    offset, another offset as +HH:MM of its seconds rounded half away from zero (then the
    seconds dropped)."""
    text = value.isoformat()
    offset = text[26 if value.microsecond else 19 :]  # isoformat pads the year to four digits
    if len(offset) == 6:  # a whole-minute offset: isoformat's is pydantic's, but for zero
        return text[:-6] + "Z" if offset == "+00:00" else text
    if not offset:
        return text
    seconds = value.utcoffset().total_seconds()  # type: ignore[union-attr]
    whole = int(abs(seconds) + 0.5)  # rounded half away from zero, as Rust's f64::round
    text = text[: -len(offset)]
    if not whole:
        return text + "Z"
    minutes = whole // 60
    return f"{text}{'-' if seconds < 0 else '+'}{minutes // 60:02d}:{minutes % 60:02d}"


# -- scalars: the JSON text of a field's value (compact and pretty alike) ---------------------
w_str = _quote
"""A str field: the C encoder raises TypeError on anything but a str, which the writers'
entry points turn into `Doubt` (no check of our own on the hottest call)."""


def w_int(value: Any) -> str:
    """An int field (a bool is not one)."""
    if type(value) is not int:
        raise Doubt
    try:
        return repr(value)
    except ValueError:  # more digits than int's text conversion allows
        raise Doubt from None


def w_float(value: Any) -> str:
    """A float field: an int there is the float pydantic's validation would have made of it."""
    if type(value) is not float:
        if type(value) is not int or not -_SAFE_INT <= value <= _SAFE_INT:
            raise Doubt
        value = float(value)
    return _float_text(value)


def w_bool(value: Any) -> str:
    """A bool field."""
    if type(value) is not bool:
        raise Doubt
    return "true" if value else "false"


def w_time(value: Any) -> str:
    """A datetime field."""
    if type(value) is not _datetime:
        raise Doubt
    text = value.isoformat()
    if text[-6:] == "+00:00" and len(text) in (25, 32):  # UTC, what LoopX writes: no second call
        return '"' + text[:-6] + 'Z"'
    return '"' + _time_text(value) + '"'


def p_scalars(text: Callable[[Any], str]) -> Pretty:
    """`list[scalar]` in pretty form: one call an item."""

    def write(value: Any, pad: str) -> str:
        if type(value) is not list:
            raise Doubt
        if not value:
            return "[]"
        inner = pad + "  "
        return "[\n" + inner + (",\n" + inner).join(map(text, value)) + "\n" + pad + "]"

    return write


def c_scalars(text: Callable[[Any], str]) -> Compact:
    """`list[scalar]` in compact form."""

    def write(value: Any, drop: bool) -> str:
        if type(value) is not list:
            raise Doubt
        return "[" + ",".join(map(text, value)) + "]"

    return write


# -- json mode: the value `model_dump(mode="json")` gives --------------------------------------
def j_str(value: Any, _: bool = False) -> str:
    """A str field as JSON data."""
    if type(value) is not str:
        raise Doubt
    return value


def j_key(value: Any) -> str:
    """A dict key as JSON data: a lone surrogate in one is doubt (pydantic writes U+FFFD for it, or
    raises, by the dict's type)."""
    if type(value) is not str:
        raise Doubt
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise Doubt from None
    return value


def j_int(value: Any, _: bool = False) -> int:
    """An int field as JSON data."""
    if type(value) is not int:
        raise Doubt
    return value


def j_float(value: Any, _: bool = False) -> float:
    """A float field as JSON data (finite)."""
    if type(value) is not float:
        if type(value) is not int or not -_SAFE_INT <= value <= _SAFE_INT:
            raise Doubt
        value = float(value)
    if value - value != 0:
        raise Doubt
    return value


def j_bool(value: Any, _: bool = False) -> bool:
    """A bool field as JSON data."""
    if type(value) is not bool:
        raise Doubt
    return value


def j_time(value: Any, _: bool = False) -> str:
    """A datetime field as JSON data: its text."""
    if type(value) is not _datetime:
        raise Doubt
    return _time_text(value)


# -- containers ---------------------------------------------------------------------------------
def p_scalar(text: Callable[[Any], str]) -> Pretty:
    """A scalar writer in a container's pretty form (the indent does not matter to it)."""

    def write(value: Any, pad: str) -> str:
        return text(value)

    return write


def c_scalar(text: Callable[[Any], str]) -> Compact:
    """A scalar writer in a container's compact form."""

    def write(value: Any, drop: bool) -> str:
        return text(value)

    return write


def p_optional(inner: Pretty) -> Pretty:
    """`X | None` in pretty form."""

    def write(value: Any, pad: str) -> str:
        return "null" if value is None else inner(value, pad)

    return write


def c_optional(inner: Compact) -> Compact:
    """`X | None` in compact form (inside a container: `exclude_none` keeps it)."""

    def write(value: Any, drop: bool) -> str:
        return "null" if value is None else inner(value, drop)

    return write


def j_optional(inner: Json) -> Json:
    """`X | None` as JSON data."""

    def write(value: Any, drop: bool) -> Any:
        return None if value is None else inner(value, drop)

    return write


def p_list(item: Pretty) -> Pretty:
    """`list[X]` in pretty form."""

    def write(value: Any, pad: str) -> str:
        if type(value) is not list:
            raise Doubt
        if not value:
            return "[]"
        inner = pad + "  "
        return "[\n" + inner + (",\n" + inner).join([item(v, inner) for v in value]) + "\n" + pad + "]"

    return write


def c_list(item: Compact) -> Compact:
    """`list[X]` in compact form."""

    def write(value: Any, drop: bool) -> str:
        if type(value) is not list:
            raise Doubt
        return "[" + ",".join([item(v, drop) for v in value]) + "]"

    return write


def j_list(item: Json) -> Json:
    """`list[X]` as JSON data."""

    def write(value: Any, drop: bool) -> Any:
        if type(value) is not list:
            raise Doubt
        return [item(v, drop) for v in value]

    return write


def p_dict(item: Pretty) -> Pretty:
    """`dict[str, X]` in pretty form (insertion order, as pydantic)."""

    def write(value: Any, pad: str) -> str:
        if type(value) is not dict:
            raise Doubt
        if not value:
            return "{}"
        inner = pad + "  "
        return (
            "{\n"
            + inner
            + (",\n" + inner).join([w_str(k) + ": " + item(v, inner) for k, v in value.items()])
            + "\n"
            + pad
            + "}"
        )

    return write


def c_dict(item: Compact) -> Compact:
    """`dict[str, X]` in compact form."""

    def write(value: Any, drop: bool) -> str:
        if type(value) is not dict:
            raise Doubt
        return "{" + ",".join([w_str(k) + ":" + item(v, drop) for k, v in value.items()]) + "}"

    return write


def j_dict(item: Json) -> Json:
    """`dict[str, X]` as JSON data."""

    def write(value: Any, drop: bool) -> Any:
        if type(value) is not dict:
            raise Doubt
        return {j_key(k): item(v, drop) for k, v in value.items()}

    return write


# -- Any: what pydantic infers from the value's own type ----------------------------------------
def _any_text(value: Any) -> str | None:
    """A scalar's JSON text, or None when `value` is a list or dict (anything else is doubt)."""
    kind = type(value)
    if kind is str:
        return _quote(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return w_int(value)
    if kind is float:
        return _float_text(value)
    if kind is _datetime:
        return '"' + _time_text(value) + '"'
    if kind is list or kind is dict:
        return None
    raise Doubt


def p_any(value: Any, pad: str) -> str:
    """A value of a free JSON object, in pretty form."""
    text = _any_text(value)
    if text is not None:
        return text
    if not value:
        return "[]" if type(value) is list else "{}"
    inner = pad + "  "
    if type(value) is list:
        return "[\n" + inner + (",\n" + inner).join([p_any(v, inner) for v in value]) + "\n" + pad + "]"
    parts = [w_str(k) + ": " + p_any(v, inner) for k, v in value.items()]
    return "{\n" + inner + (",\n" + inner).join(parts) + "\n" + pad + "}"


def c_any(value: Any, drop: bool = False) -> str:
    """A value of a free JSON object, in compact form (`exclude_none` does not reach inside)."""
    text = _any_text(value)
    if text is not None:
        return text
    if type(value) is list:
        return "[" + ",".join([c_any(v) for v in value]) + "]"
    return "{" + ",".join([w_str(k) + ":" + c_any(v) for k, v in value.items()]) + "}"


def j_any(value: Any, drop: bool = False) -> Any:
    """A value of a free JSON object as JSON data."""
    kind = type(value)
    if kind is str or value is None or kind is bool or kind is int:
        return value
    if kind is float:
        if value - value != 0:
            raise Doubt
        return value
    if kind is _datetime:
        return _time_text(value)
    if kind is list:
        return [j_any(v) for v in value]
    if kind is dict:
        return {j_key(k): j_any(v) for k, v in value.items()}
    raise Doubt
