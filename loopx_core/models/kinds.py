"""`Kind`: a str that is one of its class's few spellings, as a `StrEnum` member is, without enum.

`enum` (with the functools and collections it loads) costs a process about 3 ms at start-up;
the settlement kinds are named by every tick's packet and every settlement command. A `Kind`
subclass lists its members once with `members(...)`; then `Kind("text")` is the member spelled
`text` (a `ValueError` for any other text), each member is a class attribute (`VALIDATION`),
and a member is a str: equal to, hashed as, printed and dumped as its text.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import TypeVar

    K = TypeVar("K", bound="Kind")


class Kind(str):
    """One of a subclass's members (`members`): a str, refusing any other text."""

    _members: tuple[Kind, ...] = ()

    def __new__(cls, text: str) -> Kind:
        """The member spelled `text`, or a `ValueError` (`StrEnum`'s words)."""
        for member in cls._members:
            if member == text:
                return member
        raise ValueError(f"{text!r} is not a valid {cls.__name__}")

    def __getnewargs__(self) -> tuple[str]:
        """What a copy or a pickle rebuilds the member from."""
        return (str.__str__(self),)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.upper()}: {str.__repr__(self)}>"

    __str__ = str.__str__


def members(cls: type[K], *texts: str) -> tuple[K, ...]:
    """Make `texts` the members of `cls`, in order, each also its attribute in upper case."""
    made = tuple(str.__new__(cls, text) for text in texts)
    cls._members = made
    for member in made:
        setattr(cls, member.upper(), member)
    return made
