"""`hookimpl`: the marker host plugins put on their hook functions, without importing pluggy.

It sets the attribute pluggy's `HookimplMarker("loopx")` sets (`loopx_impl`, the same options),
so pluggy's manager finds a marked function exactly as before, while a host module (and the
lean registry, hosts/builtin.py) imports no pluggy. tests/test_host_registry_lean.py checks
both markers leave the same attribute for every combination of options.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, overload

    _F = TypeVar("_F", bound=Callable[..., Any])

PROJECT_NAME = "loopx"
"""pluggy's project name for LoopX's hooks."""
IMPL_ATTRIBUTE = PROJECT_NAME + "_impl"
"""Where pluggy looks for a hook implementation's options (`<project>_impl`)."""
HOOK_NAMES = ("loopx_register_hosts", "loopx_register_notice_sinks")
"""The hooks hosts/hookspecs.py specifies (a test keeps the two lists equal)."""


if TYPE_CHECKING:  # the overloads, for type checkers; at run time the definition below

    @overload
    def hookimpl(
        function: _F,
        hookwrapper: bool = ...,
        optionalhook: bool = ...,
        tryfirst: bool = ...,
        trylast: bool = ...,
        specname: str | None = ...,
        wrapper: bool = ...,
    ) -> _F: ...
    @overload
    def hookimpl(
        function: None = ...,
        hookwrapper: bool = ...,
        optionalhook: bool = ...,
        tryfirst: bool = ...,
        trylast: bool = ...,
        specname: str | None = ...,
        wrapper: bool = ...,
    ) -> Callable[[_F], _F]: ...


def hookimpl(
    function: _F | None = None,
    hookwrapper: bool = False,
    optionalhook: bool = False,
    tryfirst: bool = False,
    trylast: bool = False,
    specname: str | None = None,
    wrapper: bool = False,
) -> _F | Callable[[_F], _F]:
    """Mark a hook implementation: `@hookimpl` or `@hookimpl(tryfirst=True, ...)`, as pluggy's marker."""

    def mark(func: _F) -> _F:
        options = {
            "wrapper": wrapper,
            "hookwrapper": hookwrapper,
            "optionalhook": optionalhook,
            "tryfirst": tryfirst,
            "trylast": trylast,
            "specname": specname,
        }
        setattr(func, IMPL_ATTRIBUTE, options)
        return func

    return mark if function is None else mark(function)
