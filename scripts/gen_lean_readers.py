"""Write loopx_core/models/lean.py: pydantic-free readers derived from the stored models.

pydantic stays the one definition of every file's schema. This script walks those models
(fields, annotations, constraints, defaults, field validators, methods) and writes a module
that parses the same files with the standard library only, for the hot read path. The lean
reader accepts a document only when it is sure pydantic would accept it with the same values
(canonical JSON types, times in the ISO form LoopX writes); on any doubt it answers None and
the caller validates with pydantic, so refusals keep pydantic's exact error.
tests/test_lean_readers.py checks the module is current and that both agree on generated files.

Run `python scripts/gen_lean_readers.py` after changing a model (`--check`: exit 1 if stale).
"""

from __future__ import annotations

import ast
import builtins
import inspect
import json
import math
import re
import subprocess
import sys
import textwrap
import types
import typing
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt
from pydantic import AfterValidator, BaseModel, StringConstraints
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))  # ruff_formatted, shared by the generators

from ruff_formatted import ruff_formatted  # noqa: E402

from loopx_core.models import domain  # noqa: E402
from loopx_core.models.goal import GoalState  # noqa: E402
from loopx_core.models.journal import TurnJournal  # noqa: E402
from loopx_core.models.lean_runtime import TIME_PATTERN  # noqa: E402
from loopx_core.models.ledger import LedgerEvent  # noqa: E402
from loopx_core.models.registry import Registry  # noqa: E402
from loopx_core.models.runs import RunIndexEntry  # noqa: E402
from loopx_core.models.scheduler import SchedulerState  # noqa: E402
from loopx_core.store.config import StoreConfig  # noqa: E402
from loopx_core.store.receipt_index import ReceiptIndex  # noqa: E402

sys.path.insert(0, str(REPO / "plugins"))
from loopx_claude_code.models import StopCounter  # noqa: E402

TARGET = REPO / "loopx_core" / "models" / "lean.py"
ROOTS: tuple[type[BaseModel], ...] = (
    Registry,
    GoalState,
    LedgerEvent,
    TurnJournal,
    SchedulerState,
    RunIndexEntry,
    StoreConfig,
    ReceiptIndex,
)
"""The files the hot path reads (and the settlement commands write); every model they contain too."""
LINE_MODELS: tuple[type[BaseModel], ...] = (LedgerEvent,)
"""Models the hot path reads many lines of: each also gets a canonical-line form (`LINE_FORMS`)."""
_STRING = r'"([^"\\\x00-\x1f]*)"'
"""A JSON string without escapes or control characters: its text between the quotes is its value."""
_INT = r"(-?(?:0|[1-9][0-9]{0,18}))"
_NUMBER = (
    r"(?:"
    + _INT
    + r"|(-?(?:0|[1-9][0-9]{0,18})(?:\.[0-9]{1,24}(?:[eE][-+]?[0-9]{1,2})?|[eE][-+]?[0-9]{1,2})))"
)
"""A JSON number: an integer's text (group 1) or a float's (group 2), finite by its exponent's size."""
PLUGIN_TARGETS: dict[Path, tuple[type[BaseModel], ...]] = {
    REPO / "plugins" / "loopx_claude_code" / "lean.py": (StopCounter,),
}
"""A built-in plugin's own files its hooks read: a module each, on the same lean runtime."""
RUNTIME_NAMES = (
    "Doubt",
    "_REQUIRED",
    "_Lean",
    "_any",
    "_aware",
    "_bool",
    "_dict",
    "_float",
    "_id",
    "_int",
    "_list",
    "_literal",
    "_optional",
    "_str",
    "_time",
    "_time_text",
    "_UNSET",
    "dump",
    "dump_compact",
    "dump_line",
    "dumps",
    "loads",
    "to_json",
)
"""What each generated module takes from the hand-written runtime, loopx_core/models/lean_runtime.py."""
WRITER_NAMES = (
    "c_any",
    "c_dict",
    "c_list",
    "c_optional",
    "c_scalar",
    "c_scalars",
    "j_any",
    "j_bool",
    "j_dict",
    "j_float",
    "j_int",
    "j_list",
    "j_optional",
    "j_str",
    "j_time",
    "p_any",
    "p_dict",
    "p_list",
    "p_optional",
    "p_scalar",
    "p_scalars",
    "w_bool",
    "w_float",
    "w_int",
    "w_str",
    "w_time",
)
"""What each generated writers' module takes from their runtime, loopx_core/models/lean_writer.py."""
PURE_MODULES = ("math", "loopx_core.models.identity", "loopx_core.ids", "loopx_core.errors")
"""Modules a copied method may use (none imports pydantic)."""


class Generator:
    """Collects the generated source for every model reachable from ROOTS."""

    def __init__(
        self,
        roots: tuple[type[BaseModel], ...] = ROOTS,
        lines: tuple[type[BaseModel], ...] = (),
        module: str = "loopx_core.models.lean",
    ) -> None:
        self.roots = roots
        self.lines = lines
        self.module = module
        """The generated module's import name."""
        self.dump_module = module + "_dump"
        """Its writers' module (`render_writers`), apart: a tick reads and never loads them."""
        self.models: list[type[BaseModel]] = []
        self.imports: set[str] = set()
        self.constants: dict[str, str] = {}

    def visit(self, model: type[BaseModel]) -> None:
        """Queue `model` and every model its fields contain (contained ones first)."""
        if model in self.models:
            return
        for info in model.model_fields.values():
            for inner in _models_in(info.annotation):
                self.visit(inner)
        self.models.append(model)

    # -- field checks ---------------------------------------------------------------------
    def check(self, annotation: Any, metadata: list[Any]) -> str:
        """The expression of a checker for one annotated type."""
        origin = get_origin(annotation)
        if origin is Annotated:
            base, *more = get_args(annotation)
            return self.check(base, [*more, *metadata])
        if origin in (Union, types.UnionType):
            options = [a for a in get_args(annotation) if a is not type(None)]
            if len(options) != len(get_args(annotation)) - 1 or len(options) != 1:
                raise SystemExit(f"unsupported union {annotation!r}")
            return f"_optional({self.check(options[0], metadata)})"
        if origin is Literal:
            return f"_literal({get_args(annotation)!r})"
        if origin is list:
            _container(annotation, metadata)
            (item,) = get_args(annotation)
            return f"_list({self.check(item, [])})"
        if origin is dict:
            _container(annotation, metadata)
            key, value = get_args(annotation)
            return f"_dict({self.check(key, [])}, {self.check(value, [])})"
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return f"_model_{annotation.__name__}"
        if annotation is Any:
            return "_any"
        return self.scalar(annotation, _flatten(metadata))

    def scalar(self, annotation: Any, metadata: list[Any]) -> str:
        """A checker for str, int, float, bool or a time, with its constraints."""
        bounds = {"ge": None, "gt": None, "le": None, "lt": None}
        pattern = None
        after = []
        for item in metadata:
            if isinstance(item, Ge):
                bounds["ge"] = item.ge
            elif isinstance(item, Gt):
                bounds["gt"] = item.gt
            elif isinstance(item, Le):
                bounds["le"] = item.le
            elif isinstance(item, Lt):
                bounds["lt"] = item.lt
            elif isinstance(item, StringConstraints) and item.pattern is not None:
                pattern = item.pattern
            elif isinstance(item, AfterValidator):
                after.append(item.func)
            elif type(item).__name__ == "AllowInfNan":
                pass  # the lean checker refuses every non-finite number anyway
            else:
                raise SystemExit(f"unsupported constraint {item!r} on {annotation!r}")
        limits = ", ".join(f"{k}={v!r}" for k, v in bounds.items() if v is not None)
        if annotation is bool:
            return "_bool"
        if annotation is int:
            return f"_int({limits})"
        if annotation is float:
            return f"_float({limits})"
        if annotation is str:
            if after == [domain._id] and pattern == domain.ID_PATTERN:
                return "_id"
            if after or pattern:
                raise SystemExit(f"unsupported string constraints {metadata!r}")
            return "_str"
        if annotation in (datetime, domain.AwareDatetime):
            ends = [_time_end(f) for f in after]
            if len(ends) > 1:
                raise SystemExit(f"unsupported time validators {after!r}")
            end = ends[0] if ends else None
            if end is None:
                return "_time(None)"
            self.imports.add("from loopx_core.datetimes import UTC, datetime")
            return f"_time(datetime({end.year}, {end.month}, {end.day}, tzinfo=UTC))"
        raise SystemExit(f"unsupported type {annotation!r}")

    # -- classes ---------------------------------------------------------------------------
    def model_source(self, model: type[BaseModel]) -> str:
        """The lean class and its checker for one model.

        The checker is straight-line code, one block a field (what the runtime's `_model` does
        in a loop, without the loop: a tick checks a few thousand fields): a dict with no
        unknown key, each field checked (its field validator after, a `ValueError` is doubt)
        or defaulted, a missing required one is doubt.
        """
        name = model.__name__
        validators = self.validator_map(model)
        methods = self.methods(model)
        doc = (model.__doc__ or name).strip().splitlines()[0]
        hoisted: list[str] = [f"_NAMES_{name} = frozenset({tuple(model.model_fields)!r})"]
        body = [
            f"def _model_{name}(value: Any) -> {name}:",
            f'    """A lean `{name}` from parsed JSON, or `Doubt`."""',
            f"    if type(value) is not dict or not _NAMES_{name}.issuperset(value):",
            "        raise Doubt",
            f"    out = {name}.__new__({name})",
        ]
        for field, info in model.model_fields.items():
            check = self.check(info.annotation, list(info.metadata))
            optional = check.startswith("_optional(")
            inner = check.removeprefix("_optional(").removesuffix(")") if optional else check
            choices = (
                ast.literal_eval(inner.removeprefix("_literal(")[:-1])
                if inner.startswith("_literal(")
                else ()
            )
            words = bool(choices) and all(type(c) is str for c in choices) and field not in validators
            if words:  # a set of words: membership, not the runtime's loop over the choices
                hoisted.append(f"_C_{name}_{field} = frozenset({choices!r})")
            elif not inner.isidentifier():  # a checker built once, at import
                hoisted.append(f"_C_{name}_{field} = {inner}")
                inner = f"_C_{name}_{field}"
            checked = f"{inner}(v)" if not optional else f"None if v is None else {inner}(v)"
            default = self.default(info)
            body.append(f"    v = value.get({field!r}, _REQUIRED)")
            if default == "_REQUIRED":
                body += ["    if v is _REQUIRED:", "        raise Doubt"]
            else:
                absent = (
                    default.removeprefix("lambda: ") if default.startswith("lambda: ") else f"{default}()"
                )
                body += ["    if v is _REQUIRED:", f"        out.{field} = {absent}", "    else:"]
            pad = "    " if default == "_REQUIRED" else "        "
            if field in validators:
                body += [
                    f"{pad}try:",
                    f"{pad}    out.{field} = {validators[field]}({name}, {checked})",
                    f"{pad}except ValueError:",
                    f"{pad}    raise Doubt from None",
                ]
            elif words:
                guard = "v is not None and " if optional else ""
                body += [
                    f"{pad}if {guard}(type(v) is not str or v not in _C_{name}_{field}):",
                    f"{pad}    raise Doubt",
                    f"{pad}out.{field} = v",
                ]
            else:
                body.append(f"{pad}out.{field} = {checked}")
        body.append("    return out")
        return "\n".join(
            [
                f"class {name}(_Lean):",
                f'    """{doc} (lean twin of `{model.__module__}.{name}`)."""',
                "",
                f"    __slots__ = {tuple(model.model_fields)!r}",
                f"    _lean_dump = {self.dump_module!r}",
                '    """The generated module of its writers, imported on the first write (a read needs none)."""',
                "",
                *self.constructor(model),
                *methods,
                "",
                "",
                *hoisted,
                "",
                "",
                *body,
            ]
        )

    def constructor(self, model: type[BaseModel]) -> list[str]:
        """`__init__` taking every field by keyword, with the model's defaults (a default factory's
        fresh list, dict or lean model when not given) and no validation; a given list or dict is
        copied one level, as pydantic's constructor copies it. Python refuses a missing required
        field or an unknown keyword (TypeError)."""
        params: list[str] = []
        body: list[str] = []
        for field, info in model.model_fields.items():
            given = _copied(info.annotation, field)
            factory = info.default_factory
            if factory is not None:
                if factory in (list, dict):
                    fresh = "[]" if factory is list else "{}"
                elif isinstance(factory, type) and issubclass(factory, BaseModel):
                    fresh = f"{factory.__name__}()"
                else:
                    raise SystemExit(f"unsupported default factory {factory!r}")
                params.append(f"{field}: Any = _UNSET")
                body.append(f"self.{field} = {fresh} if {field} is _UNSET else {given}")
                continue
            self.default(info)  # refuses a default the lean module cannot hold
            shown = "" if info.default is PydanticUndefined else f" = {info.default!r}"
            params.append(f"{field}: Any{shown}")
            body.append(f"self.{field} = {given}")
        return [
            f"    def __init__(self, *, {', '.join(params)}) -> None:",
            f'        """A `{model.__name__}` of these fields (unvalidated), defaults as the model has them."""',
            *(f"        {line}" for line in body),
        ]

    def default(self, info: FieldInfo) -> str:
        """`_REQUIRED`, a constant default, or a factory."""
        if info.default_factory is not None:
            factory = info.default_factory
            if factory in (list, dict):
                return factory.__name__
            if isinstance(factory, type) and issubclass(factory, BaseModel):
                return f"lambda: _model_{factory.__name__}({{}})"
            raise SystemExit(f"unsupported default factory {factory!r}")
        if info.default is PydanticUndefined:
            return "_REQUIRED"
        if info.default is None or isinstance(info.default, bool | int | float | str):
            return f"lambda: {info.default!r}"
        raise SystemExit(f"unsupported default {info.default!r}")

    def validator_map(self, model: type[BaseModel]) -> dict[str, str]:
        """`{field: function name}` of the model's field validators (copied, mode after)."""
        found = {}
        for decorator in model.__pydantic_decorators__.field_validators.values():
            if decorator.info.mode != "after":
                raise SystemExit(f"unsupported validator mode {decorator.info.mode}")
            func = decorator.func.__func__ if hasattr(decorator.func, "__func__") else decorator.func
            copied = f"_{model.__name__}{func.__name__}"
            self.copy_function(func, copied, model, static=True)
            for field in decorator.info.fields:
                found[field] = copied
        return found

    def methods(self, model: type[BaseModel]) -> list[str]:
        """Every method and property the model defines itself, copied."""
        lines: list[str] = []
        for attr, value in model.__dict__.items():
            func = value.fget if isinstance(value, property) else value
            if not inspect.isfunction(func) or attr.startswith("__") or attr in _validator_names(model):
                continue
            self.require_globals(func, model)
            source = textwrap.dedent(inspect.getsource(func))
            if isinstance(value, property) and not source.startswith("@property"):
                source = "@property\n" + source
            lines += ["", *textwrap.indent(source.rstrip(), "    ").splitlines()]
        return lines

    def copy_function(self, func: Any, name: str, model: type[BaseModel], *, static: bool) -> None:
        """Copy a validator as a module-level function `name(cls, value)`."""
        self.require_globals(func, model)
        source = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(source)
        node = tree.body[0]
        assert isinstance(node, ast.FunctionDef)
        node.decorator_list = []
        node.name = name
        self.constants[name] = ast.unparse(tree)

    def require_globals(self, func: Any, model: type[BaseModel]) -> None:
        """Make every global a copied function uses available: a model, a constant or an import."""
        module = sys.modules[func.__module__]
        for name in _global_names(func):
            if hasattr(builtins, name):
                continue
            value = module.__dict__.get(name)
            if isinstance(value, type) and issubclass(value, BaseModel):
                continue  # the lean twin has the same name
            if isinstance(value, types.ModuleType) and value.__name__ in PURE_MODULES:
                self.imports.add(f"import {value.__name__}")
            elif getattr(value, "__module__", None) in PURE_MODULES and callable(value):
                self.imports.add(f"from {value.__module__} import {name}")
            elif _is_constant(value):
                self.constants.setdefault(name, f"{name} = {_source(value)}")
            elif value is typing.Any or value is Literal:
                continue
            else:
                raise SystemExit(
                    f"{model.__name__}.{func.__name__} uses {name!r}, which the lean module cannot have"
                )

    # -- canonical lines -------------------------------------------------------------------
    def line_form(self, model: type[BaseModel]) -> tuple[str, str]:
        """A model's canonical-line reader: its regex, and the source of `_line_<Model>(groups)`.

        LoopX writes a line with `model_dump_json(exclude_none=True)`: every field in declaration
        order, compact, no `null`. The regex matches exactly that form (an absent defaulted field
        leaves its groups None) and decides strings, ids and literals; the function builds the
        lean object from the groups, running the field's lean check on numbers and times.
        Anything else (spaces, another key order, escapes, `null`, 1e300) does not match and is
        read the general way.
        """
        name = model.__name__
        decorators = model.__pydantic_decorators__
        if decorators.field_validators or decorators.model_validators:
            raise SystemExit(f"{name}: validators are unsupported in a line form")
        parts: list[str] = []
        checks: list[str] = []
        body = [f"    out = {name}.__new__({name})"]
        group = 0
        for index, (field, info) in enumerate(model.model_fields.items()):
            fragment, kind, check = self.line_value(info.annotation, list(info.metadata))
            piece = ("," if index else "") + f'"{field}":' + fragment
            if not info.is_required() and not index:
                raise SystemExit(f"{name}: the first field of a line form must be required")
            parts.append(piece if info.is_required() else f"(?:{piece})?")
            if kind == "number":  # two groups: an integer's text, or a (finite) float's
                value, absent = (
                    f"int(g[{group}]) if g[{group}] is not None else float(g[{group + 1}])",
                    (f"g[{group}] is None and g[{group + 1}] is None"),
                )
                group += 2
            else:
                value = f"int(g[{group}])" if kind == "int" else f"g[{group}]"
                absent = f"g[{group}] is None"
                group += 1
            checked = _inline_check(check, kind, group - (2 if kind == "number" else 1), name, field)
            if checked is not None:  # the check written out: no call per line (a window is 1,000 lines)
                checks.extend(checked[1])
                statements = checked[0]
                if info.is_required():
                    body += [f"    {line}" for line in statements] + [f"    out.{field} = v"]
                else:
                    default = self.default(info)
                    shown = (
                        default.removeprefix("lambda: ") if default.startswith("lambda: ") else default + "()"
                    )
                    body += [f"    if {absent}:", f"        out.{field} = {shown}", "    else:"]
                    body += [f"        {line}" for line in statements] + [f"        out.{field} = v"]
                continue
            if check != "None":
                checks.append(f"_LINE_{name}_{field} = {check}")
                value = f"_LINE_{name}_{field}({value})"
            if not info.is_required() and value == f"g[{group - 1}]" and self.default(info) == "lambda: None":
                pass  # an absent group is None, the default
            elif not info.is_required():
                default = self.default(info)
                value = f"{default.removeprefix('lambda: ') if default.startswith('lambda: ') else default + '()'} if {absent} else {value}"
            body.append(f"    out.{field} = {value}")
        pattern = r"\{" + "".join(parts) + r"\}"
        function = "\n".join(
            [
                *checks,
                "",
                "",
                f"def _line_{name}(g: tuple[Any, ...]) -> {name}:",
                f'    """A `{name}` from the groups of its canonical line (`Doubt` if a check refuses)."""',
                *body,
                "    return out",
            ]
        )
        return f"    {name!r}: ({pattern!r}, _line_{name}),", function

    def line_value(self, annotation: Any, metadata: list[Any]) -> tuple[str, str, str]:
        """One field's value in a canonical line: its regex, `str`/`int` (one group: its text, or
        its text as an int) or `number` (two groups, see `_NUMBER`), and the check still to run
        (`None`: the regex alone decides)."""
        origin = get_origin(annotation)
        if origin is Annotated:
            base, *more = get_args(annotation)
            return self.line_value(base, [*more, *metadata])
        if origin in (Union, types.UnionType):
            options = [a for a in get_args(annotation) if a is not type(None)]
            if len(options) != 1:
                raise SystemExit(f"unsupported union {annotation!r} in a line form")
            return self.line_value(options[0], metadata)  # None is never written: a null is not matched
        if origin is Literal:
            choices = get_args(annotation)
            if all(type(c) is str for c in choices):
                return '"(' + "|".join(re.escape(c) for c in choices) + ')"', "str", "None"
            if all(type(c) is int for c in choices):
                return "(" + "|".join(str(c) for c in choices) + ")", "int", "None"
            raise SystemExit(f"unsupported literal {annotation!r} in a line form")
        check = self.check(annotation, metadata)
        if check == "_id":
            # the id pattern, and no '..' anywhere in it (an id holds no quote: [^"]* stays inside)
            return (
                '"((?![^"]*\\.\\.)' + domain.ID_PATTERN.removeprefix("^").removesuffix("$") + ')"',
                "str",
                "None",
            )
        if check == "_str":
            return _STRING, "str", "None"
        if check.startswith("_int("):
            return _INT, "int", check
        if check.startswith("_float("):
            return _NUMBER, "number", check
        if check.startswith("_time("):  # the time's own pattern: the builder need not match it again
            return '"(' + TIME_PATTERN + ')"', "str", check.replace("_time(", "_time_text(", 1)
        raise SystemExit(f"unsupported field {annotation!r} in a line form")

    def domains(self) -> str:
        """`DOMAINS`: a python-mode check of each input-domain alias of models/domain.py, for
        `domain.check`'s lean twin (the value `TypeAdapter(alias).validate_python` gives, or `Doubt`)."""
        if self.roots is not ROOTS:
            return ""  # a plugin's module: the core's DOMAINS serve every caller
        entries = []
        for name, alias in vars(domain).items():
            if get_origin(alias) is not Annotated or get_origin(get_args(alias)[0]) is not None:
                continue  # not an alias, or a container (a free JSON object is no input domain)
            check = self.check(alias, [])
            if check.startswith("_time("):
                check = "_aware(" + check.removeprefix("_time(")  # python mode: a datetime
            entries.append(f"    {name!r}: {check},")
        return (
            "\n\nDOMAINS: dict[str, Any] = {\n"
            + "\n".join(entries)
            + "\n}\n"
            + '"""Each input domain of loopx_core.models.domain by name: `DOMAINS[name](value)` is the value '
            + "pydantic's `TypeAdapter(domain).validate_python(value)` gives, or raises `Doubt` (a str, a "
            + 'bool, a value out of range: pydantic then gives its value or its error)."""\n'
        )

    def render(self) -> str:
        """The whole module."""
        for root in self.roots:
            self.visit(root)
        bodies = [self.model_source(m) for m in self.models]
        readers = ", ".join(f"{m.__name__!r}: _model_{m.__name__}" for m in self.models)
        body = HEADER.format(script=Path(__file__).name)
        self.imports.add(f"from loopx_core.models.lean_runtime import {', '.join(RUNTIME_NAMES)}")
        body += "\n".join(sorted(self.imports)) + "\n\n"
        body += TYPING_GUARD
        body += "\n"
        body += "\n\n".join(self.constants.values()) + "\n\n\n"
        body += "\n\n\n".join(bodies)
        body += f"\n\n\nCHECKERS: dict[str, Any] = {{{readers}}}\n"
        body += '"""Each model\'s checker by name: `CHECKERS[name](parsed_json)` is a lean object or raises `Doubt`."""\n'
        twins = ", ".join(f"{m.__name__!r}: {m.__module__!r}" for m in self.models)
        body += f"\n\nTWINS: dict[str, str] = {{{twins}}}\n"
        body += '"""The module of each lean class\'s pydantic twin (what judges a doubt about one)."""\n'
        body += self.domains()
        if not self.lines:
            return body
        forms = [self.line_form(m) for m in self.lines]
        body += "\n\n" + "\n\n\n".join(function for _, function in forms) + "\n"
        body += "\n\nLINE_FORMS: dict[str, Any] = {\n" + "\n".join(entry for entry, _ in forms) + "\n}\n"
        body += (
            '"""Models read line by line: (the regex of the line LoopX writes, the function that builds '
            'the lean object from its groups); loopx_core.store.lean uses it."""\n'
        )
        return body

    def render_writers(self) -> str:
        """The writers' module: each model's three writers, set on its lean class as `_lean_write`."""
        if not self.models:
            for root in self.roots:
                self.visit(root)
        names = ", ".join(m.__name__ for m in self.models)
        body = WRITERS_HEADER.format(script=Path(__file__).name, module=self.module)
        body += f"from {self.module} import {names}\n"
        body += "from loopx_core.models.lean_runtime import Doubt\n"
        body += f"from loopx_core.models.lean_writer import {', '.join(WRITER_NAMES)}\n\n"
        body += TYPING_GUARD + "\n\n"
        body += "\n\n\n".join("\n".join(WriterSource().source(m)) for m in self.models) + "\n"
        return body


class WriterSource:
    """The three writers of one model (loopx_core/models/lean_writer.py is their runtime).

    `_pretty_<Model>(o, pad)` is `model_dump_json(indent=2)`, `_compact_<Model>(o, exclude_none)`
    `model_dump_json(exclude_none=...)`, `_json_<Model>(o, exclude_none)` `model_dump(mode="json",
    exclude_none=...)`: straight-line code, one piece a field, in declaration order, each value
    written by its declared type (a value of another type is `Doubt`). `exclude_none` drops a
    model's None fields only, never a None inside a list or dict: what pydantic does.
    """

    def __init__(self) -> None:
        self.hoisted: list[str] = []

    def writer(self, annotation: Any, mode: str, hoist: str) -> tuple[str, bool]:
        """The writer of a value of `annotation` in `mode` (p, c or j), and whether it takes a
        second argument (the pretty indent, or exclude_none); a composite one is hoisted."""
        origin = get_origin(annotation)
        if origin is Annotated:
            return self.writer(get_args(annotation)[0], mode, hoist)
        if origin in (Union, types.UnionType):
            options = [a for a in get_args(annotation) if a is not type(None)]
            if len(options) != 1 or len(get_args(annotation)) != 2:
                raise SystemExit(f"unsupported union {annotation!r}")
            inner = self.pair(options[0], mode, hoist)
            return self.hoist(f"{mode}_optional({inner})", hoist), True
        if origin is list:
            return self.hoist(self.items(get_args(annotation)[0], mode, hoist), hoist), True
        if origin is dict:
            key, value = get_args(annotation)
            if self.writer(key, "j", hoist)[0] != "j_str":
                raise SystemExit(f"unsupported dict key {key!r}")
            return self.hoist(f"{mode}_dict({self.pair(value, mode, hoist)})", hoist), True
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return f"_{_MODES[mode]}_{annotation.__name__}", True
        if annotation is Any:
            return f"{mode}_any", True
        kind = _scalar_kind(annotation)
        return (f"j_{kind}", True) if mode == "j" else (f"w_{kind}", False)

    def pair(self, annotation: Any, mode: str, hoist: str) -> str:
        """A writer taking two arguments (a scalar's wrapped for a container)."""
        expr, two = self.writer(annotation, mode, hoist + "_")
        return expr if two else f"{mode}_scalar({expr})"

    def items(self, annotation: Any, mode: str, hoist: str) -> str:
        """A list's writer: of scalars, one call an item (`p_scalars`); else of its items' writer."""
        expr, two = self.writer(annotation, mode, hoist + "_")
        return f"{mode}_list({expr})" if two else f"{mode}_scalars({expr})"

    def hoist(self, expr: str, name: str) -> str:
        """`expr` built once at import, under `name`."""
        self.hoisted.append(f"{name} = {expr}")
        return name

    def source(self, model: type[BaseModel]) -> list[str]:
        """The model's three writers and its `_lean_write` attribute."""
        _serialisable(model)
        name = model.__name__
        pretty = [
            f"def _pretty_{name}(o: Any, pad: str) -> str:",
            f'    """`model_dump_json(indent=2)` of a `{name}` at indent `pad`, or `Doubt`."""',
            f"    if type(o) is not {name}:",
            "        raise Doubt",
        ]
        compact = [
            f"def _compact_{name}(o: Any, x: bool) -> str:",
            f'    """`model_dump_json(exclude_none=x)` of a `{name}`, or `Doubt`."""',
            f"    if type(o) is not {name}:",
            "        raise Doubt",
            "    out = []",
        ]
        as_json = [
            f"def _json_{name}(o: Any, x: bool) -> dict[str, Any]:",
            f'    """`model_dump(mode="json", exclude_none=x)` of a `{name}`, or `Doubt`."""',
            f"    if type(o) is not {name}:",
            "        raise Doubt",
            "    out = {}",
        ]
        pieces: list[str] = []
        for index, (field, info) in enumerate(model.model_fields.items()):
            annotation = _unwrapped(info.annotation)
            options = [a for a in get_args(annotation) if a is not type(None)]
            optional = get_origin(annotation) in (Union, types.UnionType)
            inner = options[0] if optional else annotation
            key = json.dumps(field)
            value = f"o.{field}"
            texts = {}
            for mode, extra in (("p", "p"), ("c", "x"), ("j", "x")):
                expr, two = self.writer(inner, mode, f"_{_HOISTED[mode]}_{name}_{field}")
                texts[mode] = f"{expr}(v, {extra})" if two else f"{expr}(v)"
            pieces += ["p" if index == 0 else "s", repr(key + ": ")]
            if optional:
                pieces.append(f'"null" if {value} is None else ' + texts["p"].replace("(v", f"({value}", 1))
                compact += [
                    f"    v = {value}",
                    "    if v is not None:",
                    f"        out.append({key + ':'!r} + {texts['c']})",
                    "    elif not x:",
                    f"        out.append({key + ':null'!r})",
                ]
                as_json += [
                    f"    v = {value}",
                    "    if v is not None:",
                    f"        out[{field!r}] = {texts['j']}",
                    "    elif not x:",
                    f"        out[{field!r}] = None",
                ]
            else:
                pieces.append(texts["p"].replace("(v", f"({value}", 1))
                compact.append(f"    out.append({key + ':'!r} + {texts['c'].replace('(v', f'({value}', 1)})")
                as_json.append(f"    out[{field!r}] = {texts['j'].replace('(v', f'({value}', 1)}")
        if pieces:
            pretty += [
                '    p = pad + "  "',
                '    s = ",\\n" + p',
                '    return "".join(("{\\n", ' + ", ".join(pieces) + ', "\\n", pad, "}"))',
            ]
        else:
            pretty.append('    return "{}"')
        compact.append('    return "{" + ",".join(out) + "}"')
        as_json.append("    return out")
        return [
            *self.hoisted,
            "",
            "",
            *pretty,
            "",
            "",
            *compact,
            "",
            "",
            *as_json,
            "",
            "",
            f"{name}._lean_write = (_pretty_{name}, _compact_{name}, _json_{name})",
        ]


_MODES = {"p": "pretty", "c": "compact", "j": "json"}
"""Each writer mode's generated function prefix."""
_HOISTED = {"p": "WP", "c": "WC", "j": "WJ"}
"""Each writer mode's prefix of hoisted writers (`_C_` is a checker's)."""


def _unwrapped(annotation: Any) -> Any:
    """`annotation` without its `Annotated` layers (constraints do not change how a value is written)."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def _scalar_kind(annotation: Any) -> str:
    """str, int, float, bool or time: the writer of a scalar annotation (a literal's by its choices)."""
    if get_origin(annotation) is Literal:
        kinds = {type(c) for c in get_args(annotation)}
        if kinds == {str}:
            return "str"
        if kinds == {int}:
            return "int"
        raise SystemExit(f"unsupported literal {annotation!r} in a writer")
    kinds = {
        str: "str",
        int: "int",
        float: "float",
        bool: "bool",
        datetime: "time",
        domain.AwareDatetime: "time",
    }
    if annotation not in kinds:
        raise SystemExit(f"unsupported type {annotation!r} in a writer")
    return kinds[annotation]


def _serialisable(model: type[BaseModel]) -> None:
    """Refuse what would make pydantic's dump differ from the plain field-by-field one."""
    decorators = model.__pydantic_decorators__
    if decorators.field_serializers or decorators.model_serializers or decorators.computed_fields:
        raise SystemExit(f"{model.__name__}: serializers are unsupported in a writer")
    for field, info in model.model_fields.items():
        if info.alias or info.serialization_alias or info.exclude:
            raise SystemExit(f"{model.__name__}.{field}: aliases and exclusions are unsupported in a writer")
    config = model.model_config
    if any(k.startswith("ser_") for k in config) or config.get("use_enum_values"):
        raise SystemExit(f"{model.__name__}: serialization settings are unsupported in a writer")


def _copied(annotation: Any, name: str) -> str:
    """The expression of a given value as pydantic's constructor keeps it: a list or dict copied once."""
    annotation = _unwrapped(annotation)
    if get_origin(annotation) in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        annotation = _unwrapped(options[0]) if len(options) == 1 else annotation
    origin = get_origin(annotation)
    if origin in (list, dict):
        inner = get_args(annotation)[-1]
        if get_origin(_unwrapped(inner)) in (list, dict):
            raise SystemExit(f"unsupported nested container {annotation!r} in a constructor")
        kind = origin.__name__
        return f"{name}.copy() if type({name}) is {kind} else {name}"
    return name


_BOUND_FAILS = {"ge": "<", "gt": "<=", "le": ">", "lt": ">="}
"""For each bound `_within` checks, the comparison that refuses a value."""


def _inline_check(
    check: str, kind: str, group: int, model: str, field: str
) -> tuple[list[str], list[str]] | None:
    """A line field's lean check written out as statements leaving the checked value in `v`
    (what `_int`, `_float` and `_time_text` do, for what the line's regex already decided:
    an int's text, a finite number's, a time's), and the module constants they name; None to
    call the check as it is."""
    if check == "None":
        return None
    call = ast.parse(check, mode="eval").body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return None
    bounds = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    refuse = " or ".join(f"v {_BOUND_FAILS[k]} {bound!r}" for k, bound in bounds.items() if bound is not None)
    refusal = [f"if {refuse}:", "    raise Doubt"] if refuse else []
    if call.func.id == "_int" and kind == "int" and not call.args:
        return [f"v = int(g[{group}])", *refusal], []
    if call.func.id == "_float" and kind == "number" and not call.args:
        return [
            f"if g[{group}] is not None:",
            f"    v = int(g[{group}])",
            "    if v > 9007199254740992 or v < -9007199254740992:",  # `_float`: abs(value) > 2**53
            "        raise Doubt",
            "    v = float(v)",
            "else:",
            f"    v = float(g[{group + 1}])",
            *refusal,
        ], []
    if call.func.id == "_time_text" and kind == "str" and len(call.args) == 1 and not bounds:
        end = ast.unparse(call.args[0])
        constant = f"_LINE_{model}_{field}_end"
        statements = [
            f"v = g[{group}]",
            'if v.endswith("-00:00"):',
            "    raise Doubt",
            "try:",
            "    v = datetime.fromisoformat(v)",
            "except ValueError:",
            "    raise Doubt from None",
        ]
        if end == "None":
            return statements, []
        return [*statements, f"if not _LINE_EPOCH <= v < {constant}:", "    raise Doubt"], [
            "_LINE_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)",
            f"{constant} = {end}",
        ]
    return None


def _container(annotation: Any, metadata: list[Any]) -> None:
    """Refuse a constraint on a list or dict that the lean checkers do not apply.

    `domain.finite_json` is applied already: `loads` doubts every NaN and infinity in a file.
    """
    for item in _flatten(metadata):
        if not (isinstance(item, AfterValidator) and item.func is domain.finite_json):
            raise SystemExit(f"unsupported constraint {item!r} on {annotation!r}")


def _flatten(metadata: list[Any]) -> list[Any]:
    out = []
    for item in metadata:
        inner = getattr(item, "metadata", None)
        if isinstance(item, FieldInfo):
            out += inner or []
        else:
            out.append(item)
    return out


def _time_end(func: Any) -> datetime:
    """The exclusive end a `_time_before(end)` validator closes over."""
    cells = dict(zip(func.__code__.co_freevars, func.__closure__ or (), strict=True))
    if func.__qualname__ != "_time_before.<locals>.within" or "end" not in cells:
        raise SystemExit(f"unsupported time validator {func!r}")
    return cells["end"].cell_contents  # type: ignore[no-any-return]


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def _validator_names(model: type[BaseModel]) -> set[str]:
    return {d.cls_var_name for d in model.__pydantic_decorators__.field_validators.values()}


def _global_names(func: Any) -> set[str]:
    names: set[str] = set()
    stack = [func.__code__]
    while stack:
        code = stack.pop()
        names |= set(code.co_names)
        stack += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return {n for n in names if n in sys.modules[func.__module__].__dict__}


def _source(value: Any) -> str:
    """A constant as source text, the same in every run (a frozenset's items sorted)."""
    if isinstance(value, frozenset):
        return "frozenset({" + ", ".join(_source(v) for v in sorted(value, key=repr)) + "})"
    if isinstance(value, tuple):
        return "(" + "".join(_source(v) + ", " for v in value) + ")"
    return repr(value)


def _formatted(text: str, target: Path = TARGET) -> str:
    """`text` as `ruff format` leaves it (the repository's style)."""
    return ruff_formatted(text, target, "module")


def _is_constant(value: Any) -> bool:
    if isinstance(value, bool | int | float | str) or value is None:
        return not (isinstance(value, float) and not math.isfinite(value))
    if isinstance(value, tuple | frozenset):
        return all(_is_constant(v) for v in value)
    return False


TYPING_GUARD = """
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any, Literal
"""
"""The generated modules name `Any` (and a copied method `Literal`) in hints only."""


HEADER = '''"""Lean readers of LoopX's files: GENERATED by scripts/{script} from the pydantic models.

Do not edit: run `python scripts/{script}` after changing a model. pydantic stays the schema;
this module only recognises documents pydantic would accept with the same values, in the
canonical form LoopX writes, with the standard library (no pydantic import). Anything else
raises `Doubt`, and the caller asks pydantic (loopx_core.store.lean), which accepts or refuses
with its own error. tests/test_lean_readers.py proves both agree on generated files.
"""

# ruff: noqa
from __future__ import annotations

'''


WRITERS_HEADER = '''"""Lean writers of LoopX's files: GENERATED by scripts/{script} from the pydantic models.

Do not edit: run `python scripts/{script}` after changing a model. Each lean class of
`{module}` gets `_lean_write`, its writers of `model_dump_json(indent=2)`,
`model_dump_json(exclude_none=...)` and `model_dump(mode="json")` (runtime:
loopx_core/models/lean_writer.py), set when its first write imports this module.
tests/test_lean_writers.py proves the bytes are pydantic's.
"""

# ruff: noqa
from __future__ import annotations

'''


def main() -> None:
    """Write (or `--check`) the modules: the core's, then each plugin's, each with its writers."""
    generators = {TARGET: Generator(ROOTS, LINE_MODELS)}
    generators |= {
        path: Generator(roots, module=f"{path.parent.name}.{path.stem}")
        for path, roots in PLUGIN_TARGETS.items()
    }
    sources = {}
    for path, generator in generators.items():
        sources[path] = generator.render()
        sources[path.with_name(path.stem + "_dump.py")] = generator.render_writers()
    for target, source in sources.items():
        text = _formatted(source, target)
        if "--check" in sys.argv[1:]:
            current = target.read_text() if target.exists() else ""
            if current != text:
                raise SystemExit(
                    f"{target.relative_to(REPO)} is stale: run python scripts/{Path(__file__).name}"
                )
            continue
        target.write_text(text)
    # The line forms' regexes are frozen for the hot path (loopx_core/frozen_re_codes.py): a
    # fresh process reads the lean module just written and writes (or checks) that table too.
    frozen = [sys.executable, str(REPO / "scripts" / "gen_frozen_re.py"), *sys.argv[1:]]
    raise SystemExit(subprocess.call(frozen))


if __name__ == "__main__":
    main()
