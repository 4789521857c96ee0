"""The one reader and writer of LoopX's records: field kinds and the `Record` base.

Every file LoopX keeps is declared once, as a pydantic model in `loopx_core.schema`;
scripts/gen_records.py turns each into a `Record` subclass (`loopx_core.models.records`) whose
`FIELDS` name a `Kind` per field. A kind checks a value both ways: `load` (a JSON value, or a
Python value given to a constructor) and `dump` (a record's value, checked again before it is
written), so nothing invalid is ever read or written. Standard library only: a heartbeat tick
reads its files without importing pydantic.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from loopx_core.ids import ID_RE
from loopx_core.models.constants import MIN_TIME

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Self


class Invalid(ValueError):
    """A value a field does not take: where it is (`where`, outermost first) and why."""

    def __init__(self, reason: str, where: tuple[str | int, ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.where = where

    def at(self, step: str | int) -> Invalid:
        """This error, one step further out (`todos`, then `3`, then `priority`)."""
        return Invalid(self.reason, (step, *self.where))

    @property
    def location(self) -> str:
        """The dotted path to the value (`todos.3.priority`), `(root)` for the whole document."""
        return ".".join(str(step) for step in self.where) or "(root)"

    def __str__(self) -> str:
        return f"{self.location}: {self.reason}"


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


class Kind:
    """How one field's values are read from JSON, checked, and written back."""

    __slots__ = ()

    def load(self, value: Any) -> Any:
        """The field's value from `value` (JSON, or the Python value a constructor was given)."""
        raise NotImplementedError

    def dump(self, value: Any) -> Any:
        """`value` as JSON, checked as `load` checks it."""
        return self.load(value)

    def describe(self) -> str:
        """What the field takes, in words (`a whole number >= 0 and <= 9`)."""
        raise NotImplementedError


class Text(Kind):
    """A string."""

    __slots__ = ()

    def load(self, value: Any) -> Any:
        """`value` if it is a string that UTF-8 can hold (no lone surrogate)."""
        if type(value) is str:
            if value.isascii():
                return value
            try:
                value.encode()
            except UnicodeEncodeError:
                raise Invalid("must be text (it holds a lone surrogate)") from None
            return value
        raise Invalid("must be a string")

    def describe(self) -> str:
        """Words."""
        return "a string"


class Pattern(Kind):
    """A string matching a regular expression in full."""

    __slots__ = ("pattern", "regex")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.regex = re.compile(pattern)

    def load(self, value: Any) -> Any:
        """`value` if it is a string the pattern matches in full."""
        if type(value) is str and self.regex.fullmatch(value):
            return value
        raise Invalid(f"must be {self.describe()}")

    def describe(self) -> str:
        """Words."""
        return f"a string matching {self.pattern}"


class Ident(Kind):
    """An id (`loopx_core.ids`): a safe, lower-case path segment."""

    __slots__ = ()

    def load(self, value: Any) -> Any:
        """`value` if it is a valid id."""
        if type(value) is str and ID_RE.fullmatch(value) and ".." not in value:
            return value
        raise Invalid("must be a valid id (1-64 of a-z 0-9 . _ -, no '..')")

    def describe(self) -> str:
        """Words."""
        return "1-64 of a-z 0-9 . _ - (lower case, starting with a letter or digit, no '..'), matched in full"


class Flag(Kind):
    """`true` or `false`."""

    __slots__ = ()

    def load(self, value: Any) -> Any:
        """`value` if it is a bool."""
        if type(value) is bool:
            return value
        raise Invalid("must be true or false")

    def describe(self) -> str:
        """Words."""
        return "true or false"


class Whole(Kind):
    """A whole number within bounds (never a bool, never a float)."""

    __slots__ = ("ge", "le")

    def __init__(self, ge: int, le: int) -> None:
        self.ge = ge
        self.le = le

    def load(self, value: Any) -> Any:
        """`value` if it is an int within bounds."""
        if type(value) is int and self.ge <= value <= self.le:
            return value
        raise Invalid(f"must be {self.describe()}")

    def describe(self) -> str:
        """Words."""
        return f"a whole number >= {self.ge} and <= {self.le}"


class Number(Kind):
    """A finite number within bounds, read as a float (an int is taken; a bool is not)."""

    __slots__ = ("ge", "gt", "le")

    def __init__(self, *, ge: float | None = None, gt: float | None = None, le: float | None = None) -> None:
        self.ge = ge
        self.gt = gt
        self.le = le

    def load(self, value: Any) -> Any:
        """`float(value)` if it is a finite int or float within bounds."""
        kind = type(value)
        if kind is float or kind is int:
            number = float(value)
            if (
                math.isfinite(number)
                and (self.ge is None or number >= self.ge)
                and (self.gt is None or number > self.gt)
                and (self.le is None or number <= self.le)
            ):
                return number
        raise Invalid(f"must be {self.describe()}")

    def describe(self) -> str:
        """Words."""
        bounds = ((">=", self.ge), (">", self.gt), ("<=", self.le))
        limits = [f"{op} {_number_text(bound)}" for op, bound in bounds if bound is not None]
        return f"a finite number {' and '.join(limits)}".strip()


class OneOf(Kind):
    """One of a few values (a `Literal`)."""

    __slots__ = ("choices",)

    def __init__(self, *choices: object) -> None:
        self.choices = choices

    def load(self, value: Any) -> Any:
        """`value` if it is one of the choices (of the same type: `1` is not `true`)."""
        for choice in self.choices:
            if value == choice and type(value) is type(choice):
                return choice
        raise Invalid(f"must be {self.describe()}")

    def describe(self) -> str:
        """Words."""
        return "one of " + ", ".join(map(repr, self.choices))


class Time(Kind):
    """An ISO-8601 time with a UTC offset, from 1970 to before `before`; written with `Z` for UTC."""

    __slots__ = ("before",)

    def __init__(self, before: datetime) -> None:
        self.before = before

    def load(self, value: Any) -> Any:
        """The aware datetime `value` is (or names), if it lies in range."""
        if type(value) is str:
            try:
                value = datetime.fromisoformat(value)
            except ValueError:
                raise Invalid(f"must be {self.describe()}") from None
        if isinstance(value, datetime) and value.utcoffset() is not None and MIN_TIME <= value < self.before:
            return value
        raise Invalid(f"must be {self.describe()}")

    def dump(self, value: Any) -> Any:
        """The time as ISO-8601 text (`2026-11-29T12:00:00Z`)."""
        text: str = self.load(value).isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text

    def describe(self) -> str:
        """Words."""
        return f"an ISO-8601 time with a UTC offset, from {MIN_TIME.year} to before {self.before.year}"


class Maybe(Kind):
    """`null`, or a value of `kind`."""

    __slots__ = ("kind",)

    def __init__(self, kind: Kind) -> None:
        self.kind = kind

    def load(self, value: Any) -> Any:
        """None, or `kind`'s value."""
        return None if value is None else self.kind.load(value)

    def dump(self, value: Any) -> Any:
        """None, or `kind`'s JSON."""
        return None if value is None else self.kind.dump(value)

    def describe(self) -> str:
        """Words."""
        return f"null or {self.kind.describe()}"


class ListOf(Kind):
    """A list of values of `kind` (a new list: the caller's is never kept)."""

    __slots__ = ("kind",)

    def __init__(self, kind: Kind) -> None:
        self.kind = kind

    def _each(self, value: Any, convert: Callable[[Any], Any]) -> list[Any]:
        if not isinstance(value, list | tuple):
            raise Invalid("must be a list")
        out = []
        for index, item in enumerate(value):
            try:
                out.append(convert(item))
            except Invalid as error:
                raise error.at(index) from None
        return out

    def load(self, value: Any) -> Any:
        """A list of `kind`'s values."""
        return self._each(value, self.kind.load)

    def dump(self, value: Any) -> Any:
        """A list of `kind`'s JSON."""
        return self._each(value, self.kind.dump)

    def describe(self) -> str:
        """Words."""
        return f"a list of {self.kind.describe()}"


class MapOf(Kind):
    """An object whose keys are of `key` and values of `kind` (a new dict)."""

    __slots__ = ("key", "kind")

    def __init__(self, key: Kind, kind: Kind) -> None:
        self.key = key
        self.kind = kind

    def _each(self, value: Any, convert: Callable[[Any], Any]) -> dict[Any, Any]:
        if not isinstance(value, dict):
            raise Invalid("must be an object")
        out = {}
        for name, item in value.items():
            try:
                out[self.key.load(name)] = convert(item)
            except Invalid as error:
                raise error.at(name) from None
        return out

    def load(self, value: Any) -> Any:
        """A dict of `kind`'s values."""
        return self._each(value, self.kind.load)

    def dump(self, value: Any) -> Any:
        """A dict of `kind`'s JSON."""
        return self._each(value, self.kind.dump)

    def describe(self) -> str:
        """Words."""
        return f"an object of {self.kind.describe()}"


class Json(Kind):
    """A free-form JSON object (a receipt, a host's result): any JSON, finite numbers only."""

    __slots__ = ()

    def load(self, value: Any) -> Any:
        """`value` if it is an object of JSON values without NaN or an infinity."""
        if not isinstance(value, dict):
            raise Invalid("must be an object")
        stack: list[Any] = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                if not all(type(key) is str for key in item):
                    raise Invalid("must have string keys")
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, float):
                if not math.isfinite(item):
                    raise Invalid("must hold no NaN or infinity (they are not JSON)")
            elif item is not None and type(item) not in (str, int, bool):
                raise Invalid(f"must hold only JSON values, not {type(item).__name__}")
        return value

    def describe(self) -> str:
        """Words."""
        return "a JSON object"


class Checked(Kind):
    """A value of `kind` that must also pass `rule` (a function raising `ValueError` with its reason)."""

    __slots__ = ("kind", "rule")

    def __init__(self, kind: Kind, rule: Callable[[Any], Any]) -> None:
        self.kind = kind
        self.rule = rule

    def load(self, value: Any) -> Any:
        """`kind`'s value, after `rule` accepted it."""
        value = self.kind.load(value)
        try:
            self.rule(value)
        except ValueError as error:
            raise Invalid(str(error)) from None
        return value

    def dump(self, value: Any) -> Any:
        """`kind`'s JSON, after `rule` accepted the value."""
        return self.kind.dump(self.load(value))

    def describe(self) -> str:
        """Words."""
        return self.kind.describe()


class Nested(Kind):
    """A record of class `cls`, as a JSON object."""

    __slots__ = ("cls",)

    def __init__(self, cls: type[Record]) -> None:
        self.cls = cls

    def load(self, value: Any) -> Any:
        """The record `value` is (or describes)."""
        if isinstance(value, self.cls):
            return value
        return self.cls.load(value)

    def dump(self, value: Any) -> Any:
        """The record's JSON object."""
        if not isinstance(value, self.cls):
            raise Invalid(f"must be a {self.cls.__name__}")
        return value.dump()

    def describe(self) -> str:
        """Words."""
        return f"a {self.cls.__name__} object"


REQUIRED: Any = object()
"""A field's default when it has none: the value must be given."""
_ABSENT: Any = object()


class Field:
    """A field of a record: its kind, and its default value or the factory that makes one."""

    __slots__ = ("default", "factory", "kind")

    def __init__(
        self, kind: Kind, default: Any = REQUIRED, *, factory: Callable[[], Any] | None = None
    ) -> None:
        self.kind = kind
        self.default = default
        self.factory = factory

    @property
    def required(self) -> bool:
        """True when the field has no default."""
        return self.default is REQUIRED and self.factory is None


class Record:
    """A record of one of LoopX's files: its fields are `FIELDS`, in the order they are written.

    Built from keyword arguments (each checked by its kind) or read with `load` (a JSON
    object: unknown keys refused, missing ones defaulted); `dump` gives its JSON, checked again.
    Mutable, as the state a command changes before it writes it back.
    """

    __slots__ = ()
    FIELDS: ClassVar[dict[str, Field]] = {}
    _plan: ClassVar[tuple[tuple[str, Callable[[Any], Any], Callable[[], Any] | None, Any], ...]] = ()
    """Each field's name, load, factory and default, in order: what reading a record runs through."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._plan = tuple((name, f.kind.load, f.factory, f.default) for name, f in cls.FIELDS.items())

    def __init__(self, **values: Any) -> None:
        self._fill(values)

    @classmethod
    def load(cls, data: Any) -> Self:
        """The record a JSON object describes, or `Invalid` saying where and why it is not one."""
        if not isinstance(data, dict):
            raise Invalid("must be an object")
        record = cls.__new__(cls)
        record._fill(data)
        return record

    def _fill(self, values: dict[str, Any]) -> None:
        found = 0
        given = values.get
        for name, load, factory, default in self._plan:
            raw = given(name, _ABSENT)
            if raw is not _ABSENT:
                found += 1
                try:
                    value = load(raw)
                except Invalid as error:
                    raise error.at(name) from None
            elif factory is not None:
                value = factory()
            elif default is REQUIRED:
                raise Invalid("is required", (name,))
            else:
                value = default
            setattr(self, name, value)
        if found != len(values):
            extra = next(key for key in values if key not in self.FIELDS)
            raise Invalid(f"is not a field of {type(self).__name__}", (str(extra),))

    def dump(
        self, *, exclude_none: bool = False, exclude: frozenset[str] | set[str] = frozenset()
    ) -> dict[str, Any]:
        """The record as a JSON object (None values left out with `exclude_none`, the fields
        named in `exclude` left out), each value checked by its kind."""
        out = {}
        for name, field in self.FIELDS.items():
            value = getattr(self, name)
            if (value is None and exclude_none) or name in exclude:
                continue
            try:
                out[name] = field.kind.dump(value)
            except Invalid as error:
                raise error.at(name) from None
        return out

    def replace(self, **changes: Any) -> Self:
        """A copy with `changes`, checked as a new record is."""
        values = {name: getattr(self, name) for name in self.FIELDS}
        values.update(changes)
        return type(self)(**values)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS)
        return f"{type(self).__name__}({shown})"
