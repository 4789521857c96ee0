"""`Record`: a frozen value class declared by its annotated fields, as `@dataclass(frozen=True)`.

The values a tick builds (the decision's `Inputs`, `Assessment` and `Decision`, `QuotaUsage`, the
settlement plan) and the host toolkit's (`Base`, `RenderContext`, `HookCall`, ...) are built on
every `loopx quota should-run`, `loopx hook NAME` and `loopx heartbeat-prompt`. dataclasses
costs those commands ~8 ms (the module pulls inspect, ast and dis, and each class execs
generated code), and a `typing.NamedTuple` costs the import of typing plus ~0.2 ms a class (it
evaluates its annotations and builds the class from source). A `Record` subclass gets a frozen
dataclass's behaviour from this base: a constructor taking the fields in order (positionally
or by name, defaults from the class body, Python's own error messages), no assignment after
it, equality and hashing by value among instances of one class, `repr` and `__match_args__`;
and a NamedTuple's `_replace`. tests/test_host_records.py compares it with
`dataclass(frozen=True)`, tests/adversarial/test_record_replace.py `_replace` with NamedTuple's.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import TypeVar

    from typing_extensions import dataclass_transform

    R = TypeVar("R", bound="Record")
else:

    def dataclass_transform(**_: object) -> object:
        """At run time a no-op; type checkers read the class as a frozen dataclass."""
        return lambda cls: cls


@dataclass_transform(frozen_default=True)
class Record:
    """Subclass it and annotate the fields; a value in the class body is the field's default."""

    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls) -> None:
        own = cls.__dict__.get("__annotations__")  # noqa: RUF063 (inspect is what this avoids)
        if own is None:  # no annotations of its own, or Python 3.14's lazy ones
            own = getattr(cls, "__annotations__", {})
        for name in own:  # a list default would be one list shared by every instance
            default = cls.__dict__.get(name)
            if default is not None and type(default).__hash__ is None:
                raise ValueError(
                    f"mutable default {type(default)} for field {name} is not allowed: use default_factory"
                )
        cls._fields = (*cls._fields, *(name for name in own if name not in cls._fields))
        cls.__match_args__ = cls._fields

    def __init__(self, *args: object, **kwargs: object) -> None:
        cls = type(self)
        fields = cls._fields
        where = f"{cls.__qualname__}.__init__()"
        values = dict(zip(fields, args, strict=False))
        for name, value in kwargs.items():
            if name not in fields:
                raise TypeError(f"{where} got an unexpected keyword argument {name!r}")
            if name in values:
                raise TypeError(f"{where} got multiple values for argument {name!r}")
            values[name] = value
        if len(args) > len(fields):
            raise TypeError(_too_many(where, cls, len(args)))
        missing = [name for name in fields if name not in values and not hasattr(cls, name)]
        if missing:
            raise TypeError(_missing(where, missing))
        for name in fields:
            object.__setattr__(self, name, values[name] if name in values else getattr(cls, name))

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()  # type: ignore[attr-defined]
        return NotImplemented

    def _replace(self: R, **changes: object) -> R:
        """A copy with `changes` (field names only), as a NamedTuple's `_replace`."""
        unknown = [name for name in changes if name not in self._fields]
        if unknown:
            raise ValueError(f"Got unexpected field names: {unknown!r}")
        out = object.__new__(type(self))
        values = out.__dict__  # past the frozen __setattr__, as __init__ writes them
        values.update(self.__dict__)
        values.update(changes)
        return out

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"


def _too_many(where: str, cls: type[Record], given: int) -> str:
    """Python's message for too many positional arguments (`self` counted, as Python does)."""
    most = len(cls._fields) + 1
    defaults = sum(1 for name in cls._fields if hasattr(cls, name))
    takes = f"from {most - defaults} to {most}" if defaults else str(most)
    plural = "s" if most != 1 else ""
    return f"{where} takes {takes} positional argument{plural} but {given + 1} were given"


def _missing(where: str, names: list[str]) -> str:
    """Python's message for missing required arguments: `'a'`, `'a' and 'b'`, `'a', 'b', and 'c'`."""
    shown = [repr(name) for name in names]
    listed = " and ".join(shown) if len(shown) <= 2 else ", ".join(shown[:-1]) + ", and " + shown[-1]
    plural = "s" if len(names) > 1 else ""
    return f"{where} missing {len(names)} required positional argument{plural}: {listed}"
