"""The runtime of the generated lean readers (loopx_core/models/lean.py and each plugin's lean.py).

Hand-written and shared: the generated modules import these checkers and build one per model
field. Standard library only (no pydantic): a document is recognised exactly as pydantic would
accept it, with the same values, or `Doubt` is raised and the caller asks pydantic.
"""

from __future__ import annotations

from loopx_core.datetimes import datetime as _datetime
from loopx_core.frozen_re import compile as _compile
from loopx_core.ids import is_valid_id
from loopx_core.jsontext import decoder

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Check = Callable[[Any], Any]


class Doubt(Exception):
    """The document may not be what pydantic accepts (or not with these values): ask pydantic."""


_REQUIRED = object()
TIME_PATTERN = (
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?(?:Z|[+-][0-9]{2}:[0-5][0-9])"
)
"""The text of a time LoopX reads (a canonical line's regex embeds it: `_time_text` then trusts it).
An offset's minutes stop at 59: `datetime.fromisoformat` takes `+00:60` as an hour, pydantic refuses it."""
_TIME = _compile(TIME_PATTERN)


def _doubt(_: object = None) -> Any:
    raise Doubt


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value != 0:  # inf or nan from an overflowing literal
        raise Doubt
    return value


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):  # a key given twice: pydantic validates both values of a dict field
        raise Doubt
    return value


_DECODE = decoder(parse_constant=_doubt, parse_float=_finite_float, object_pairs_hook=_object)


def loads(data: bytes | str) -> Any:
    """JSON as pydantic's parser would read it, or `Doubt` (NaN, Infinity, a lone surrogate, a
    key given twice, ...)."""
    if isinstance(data, bytes):
        if b"\\ud" in data or b"\\uD" in data:
            raise Doubt
        text = data.decode("utf-8")
    else:
        text = data
    return _DECODE(text)


_UNSET = object()
"""A generated constructor's default for a field whose model default is a factory (a fresh value each)."""


class _Lean:
    """A plain record: the model's fields as attributes, no validation on assignment.

    Each generated class has a keyword constructor (the model's defaults) and `_lean_write`,
    its writers (loopx_core.models.lean_writer). Equal as pydantic models are: same class,
    equal fields (and unhashable, as a mutable pydantic model is).
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Lean):
            return NotImplemented
        return type(self) is type(other) and all(
            getattr(self, n) == getattr(other, n) for n in self.__slots__
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({shown})"


def dump(value: Any) -> Any:
    """A lean object as plain data (what pydantic's `model_dump()` gives for its twin)."""
    if isinstance(value, _Lean):
        return {n: dump(getattr(value, n)) for n in value.__slots__}
    if isinstance(value, list):
        return [dump(v) for v in value]
    if isinstance(value, dict):
        return {k: dump(v) for k, v in value.items()}
    return value


def _str(value: Any) -> str:
    if type(value) is not str:
        raise Doubt
    return value


def _any(value: Any) -> Any:
    return value


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise Doubt
    return value


def _id(value: Any) -> str:
    if type(value) is not str or not is_valid_id(value):  # the id pattern in full, and no '..'
        raise Doubt
    return value


def _int(ge: int | None = None, gt: int | None = None, le: int | None = None, lt: int | None = None) -> Check:
    def check(value: Any) -> int:
        if type(value) is not int or not _within(value, ge, gt, le, lt):
            raise Doubt
        return value

    return check


def _float(
    ge: float | None = None, gt: float | None = None, le: float | None = None, lt: float | None = None
) -> Check:
    def check(value: Any) -> float:
        if type(value) is int:
            if abs(value) > 2**53:
                raise Doubt
            value = float(value)
        elif type(value) is not float:
            raise Doubt
        if not _within(value, ge, gt, le, lt):
            raise Doubt
        return value

    return check


def _within(value: float, ge: float | None, gt: float | None, le: float | None, lt: float | None) -> bool:
    return (
        (ge is None or value >= ge)
        and (gt is None or value > gt)
        and (le is None or value <= le)
        and (lt is None or value < lt)
    )


_EPOCH = _datetime.fromisoformat("1970-01-01T00:00:00+00:00")


def _time(end: _datetime | None) -> Check:
    def check(value: Any) -> _datetime:
        if type(value) is not str or _TIME.fullmatch(value) is None:
            raise Doubt
        return text(value)

    text = _time_text(end)
    return check


def _time_text(end: _datetime | None) -> Check:
    """`_time`'s check for a string already known to match `TIME_PATTERN` (a canonical line's group)."""

    def check(value: str) -> _datetime:
        if value.endswith("-00:00"):
            raise Doubt
        try:
            parsed = _datetime.fromisoformat(value)
        except ValueError:
            raise Doubt from None
        if end is not None and not _EPOCH <= parsed < end:
            raise Doubt
        return parsed

    return check


def _aware(end: _datetime | None) -> Check:
    """An input time given as a datetime (python mode): aware, from 1970 to before `end`."""

    def check(value: Any) -> _datetime:
        if type(value) is not _datetime or value.utcoffset() is None:
            raise Doubt
        if end is not None and not _EPOCH <= value < end:
            raise Doubt
        return value

    return check


def _optional(inner: Check) -> Check:
    def check(value: Any) -> Any:
        return None if value is None else inner(value)

    return check


def _literal(choices: tuple[Any, ...]) -> Check:
    def check(value: Any) -> Any:
        if not any(type(value) is type(c) and value == c for c in choices):
            raise Doubt
        return value

    return check


def _list(inner: Check) -> Check:
    def check(value: Any) -> list[Any]:
        if type(value) is not list:
            raise Doubt
        return [inner(v) for v in value]

    return check


def _dict(key: Check, inner: Check) -> Check:
    def check(value: Any) -> dict[Any, Any]:
        if type(value) is not dict:
            raise Doubt
        return {key(k): inner(v) for k, v in value.items()}

    return check


# -- whole objects ------------------------------------------------------------------------------
def _writers(obj: Any) -> tuple[Any, Any, Any]:
    """The writers of `obj`'s class, their generated module imported on the first write."""
    kind = type(obj)
    found = kind.__dict__.get("_lean_write")
    if found is None:
        module = getattr(kind, "_lean_dump", None)
        if module is not None:
            __import__(module)  # sets `_lean_write` on every class of its lean module
            found = kind.__dict__.get("_lean_write")
        if found is None:
            raise TypeError(f"not a lean object: {kind.__name__}")
    return found  # type: ignore[no-any-return]


def _encoded(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: pydantic refuses to serialise it
        raise Doubt from None


_UNWRITABLE = (TypeError, AttributeError, RecursionError)
"""A writer's failures that mean the value is not what its field holds (a str writer given an
int, a field never set, a cycle): doubt, for the caller to ask pydantic."""


def dumps(obj: Any) -> bytes:
    """`model_dump_json(indent=2).encode()` of `obj`'s pydantic twin (a stored file, without its
    final newline), or `Doubt`; a `TypeError` if `obj` is no lean object."""
    write = _writers(obj)[0]
    try:
        return _encoded(write(obj, ""))
    except _UNWRITABLE:
        raise Doubt from None


def dump_line(obj: Any) -> bytes:
    """`model_dump_json(exclude_none=True).encode()` of `obj`'s twin (a ledger line), or `Doubt`."""
    write = _writers(obj)[1]
    try:
        return _encoded(write(obj, True))
    except _UNWRITABLE:
        raise Doubt from None


def dump_compact(obj: Any, *, exclude_none: bool = False) -> bytes:
    """`model_dump_json(exclude_none=...).encode()` of `obj`'s twin, or `Doubt`."""
    write = _writers(obj)[1]
    try:
        return _encoded(write(obj, exclude_none))
    except _UNWRITABLE:
        raise Doubt from None


def to_json(obj: Any, *, exclude_none: bool = False) -> dict[str, Any]:
    """`model_dump(mode="json", exclude_none=...)` of `obj`'s twin, or `Doubt`."""
    write = _writers(obj)[2]
    try:
        return write(obj, exclude_none)  # type: ignore[no-any-return]
    except _UNWRITABLE:
        raise Doubt from None
