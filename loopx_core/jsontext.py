"""JSON read and written as `json.loads` / `json.dumps` do, without importing `json`.

Why: `import json` imports `re`, which imports `enum`; in a fresh interpreter the three cost
about 5.4 ms (measured: `python -c pass` 9.3 ms, `import json` 14.7 ms), a fifth of a hot hook's
whole run. json's work is done by its C accelerator `_json` anyway, so this module drives
`_json` directly (the scanner and encoder json itself builds, with json's own settings) and
reproduces the few lines of Python around them with str methods.

Values and exceptions are json's: whatever the fast path cannot vouch for (no value, extra
data, bytes that are not plain UTF-8, `indent`, an odd argument) is handed to `json` itself, so
a refused document raises json's own `JSONDecodeError`. Errors the C scanner or encoder raise
(a hook's exception, "Circular reference detected", an out-of-range float, ...) are the very
ones json raises, since json calls the same C code with the same arguments. Without `_json`
(another interpreter) every call simply delegates to `json`.
"""

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

try:
    from _json import encode_basestring, encode_basestring_ascii, make_encoder, make_scanner
except ImportError:  # an interpreter without json's accelerator: json does all the work
    make_scanner = make_encoder = encode_basestring = encode_basestring_ascii = None

_WHITESPACE = " \t\n\r"
"""What json.decoder.JSONDecoder.decode skips around a document (its regex `[ \\t\\n\\r]*`)."""

_NOT_PLAIN_UTF8 = b"\x00\xef\xfe\xff"
"""First bytes for which json.detect_encoding may choose other than plain UTF-8 (a BOM, a NUL)."""

_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
"""json.decoder's default `parse_constant` table."""

_REFUSED = object()
"""A document the fast path does not vouch for: json decides (its value or its error)."""


class _Settings:
    """The attributes `_json.make_scanner` reads from a json.JSONDecoder, with its defaults."""

    __slots__ = ("object_hook", "object_pairs_hook", "parse_constant", "parse_float", "parse_int", "strict")

    def __init__(
        self,
        parse_float: "Callable[[str], Any] | None",
        parse_constant: "Callable[[str], Any] | None",
        object_pairs_hook: "Callable[[list[tuple[str, Any]]], Any] | None",
    ) -> None:
        # `x or default`, as JSONDecoder.__init__ does (a falsy hook means the default too).
        self.object_hook = None
        self.object_pairs_hook = object_pairs_hook
        self.parse_constant = parse_constant or _CONSTANTS.__getitem__
        self.parse_float = parse_float or float
        self.parse_int = int
        self.strict = True


def _scan_document(scan: "Callable[[str, int], tuple[Any, int]]", text: str) -> "Any":
    """The value of the document `text` (a str, exactly), or `_REFUSED` when json must decide."""
    idx = 0
    if text[:1] in _WHITESPACE:
        idx = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = scan(text, idx)
    except StopIteration:  # no value at idx (or a hook raised it: json converts that too)
        return _REFUSED
    except SystemError:
        # CPython 3.11's scanner raises its JSONDecodeError from json.decoder only if that module
        # is already loaded (`_PyImport_GetModuleId`); else "returned NULL without setting an
        # exception". Any refused document: json itself reads it again, for its own error.
        return _REFUSED
    if end != len(text) and text[end:].lstrip(_WHITESPACE):
        return _REFUSED
    return value


_SCAN = make_scanner(_Settings(None, None, None)) if make_scanner is not None else None


def loads(data: str | bytes) -> "Any":
    """`json.loads(data)`: the same value for every document json accepts, json's error otherwise."""
    if _SCAN is not None:
        if type(data) is str:
            text = data
        elif type(data) is bytes and data[:1] not in _NOT_PLAIN_UTF8 and data[1:2] != b"\x00":
            try:
                text = data.decode("utf-8", "surrogatepass")  # json.loads' decoding of UTF-8
            except UnicodeDecodeError:
                text = None
        else:
            text = None
        if text is not None:
            value = _scan_document(_SCAN, text)
            if value is not _REFUSED:
                return value
    import json

    return json.loads(data)


def decoder(
    *,
    parse_float: "Callable[[str], Any] | None" = None,
    parse_constant: "Callable[[str], Any] | None" = None,
    object_pairs_hook: "Callable[[list[tuple[str, Any]]], Any] | None" = None,
) -> "Callable[[str], Any]":
    """`json.JSONDecoder(parse_float=..., parse_constant=..., object_pairs_hook=...).decode`.

    The same values and errors; an exception a hook raises propagates unchanged. A document the
    fast path refuses is decoded again by json's decoder (hooks run again) for json's own error.
    """
    built: list[Callable[[str], Any]] = []  # json.JSONDecoder(...).decode, made on first refusal

    def json_decode(text: str) -> "Any":
        if not built:
            import json

            built.append(
                json.JSONDecoder(
                    parse_float=parse_float,
                    parse_constant=parse_constant,
                    object_pairs_hook=object_pairs_hook,
                ).decode
            )
        return built[0](text)

    if make_scanner is None:
        return json_decode
    scan = make_scanner(_Settings(parse_float, parse_constant, object_pairs_hook))

    def decode(text: str) -> "Any":
        """The value of the JSON document `text`, as json's decoder reads it."""
        if type(text) is str:
            value = _scan_document(scan, text)
            if value is not _REFUSED:
                return value
        return json_decode(text)

    return decode


def _unserialisable(value: object) -> "Any":
    """json.JSONEncoder.default: every object the encoder cannot write is refused."""
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumps(
    obj: object,
    *,
    ensure_ascii: bool = True,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
    allow_nan: bool = True,
    indent: int | str | None = None,
) -> str:
    """`json.dumps(obj, ...)` with these arguments: the same text, the same exceptions."""
    if separators is None:
        item_separator, key_separator = ", ", ": "
    elif type(separators) is tuple and len(separators) == 2 and all(type(s) is str for s in separators):
        item_separator, key_separator = separators
    else:
        item_separator = None
    if indent is not None and item_separator is not None and make_encoder is not None:
        if separators is None:  # json's default with an indent: no space before a newline
            item_separator = ","
        try:
            return _indented(obj, indent, ensure_ascii, item_separator, key_separator, sort_keys, allow_nan)
        except (_Unsure, RecursionError, TypeError, ValueError):
            pass  # json decides: its own text, or its own error
    if make_encoder is None or indent is not None or item_separator is None:
        import json

        return json.dumps(
            obj,
            ensure_ascii=ensure_ascii,
            separators=separators,
            sort_keys=sort_keys,
            allow_nan=allow_nan,
            indent=indent,
        )
    escape = encode_basestring_ascii if ensure_ascii else encode_basestring
    if isinstance(obj, str):  # JSONEncoder.encode writes a bare str directly
        return escape(obj)
    # JSONEncoder.iterencode(_one_shot=True): a fresh markers dict per call (check_circular).
    encode = make_encoder(
        {}, _unserialisable, escape, None, key_separator, item_separator, sort_keys, False, allow_nan
    )
    return "".join(encode(obj, 0))


class _Unsure(Exception):
    """A value the indenting writer leaves to json (a subclass, a cycle, a refused float, ...)."""


def _indented(
    obj: object,
    indent: int | str,
    ensure_ascii: bool,
    item_separator: str,
    key_separator: str,
    sort_keys: bool,
    allow_nan: bool,
) -> str:
    """`json.dumps(obj, indent=indent, ...)` for plain JSON values (exact dict, list, tuple, str,
    int, float, bool, None, str keys); `_Unsure` for anything else (json's Python encoder,
    json/encoder.py `_make_iterencode`, writes the same text; it is what json runs with an indent)."""
    escape = encode_basestring_ascii if ensure_ascii else encode_basestring
    pad = indent if isinstance(indent, str) else " " * indent
    out: list[str] = []
    stack: set[int] = set()

    def value(o: object, level: int) -> None:
        kind = type(o)
        if kind is str:
            out.append(escape(o))
        elif o is None or kind is bool:
            out.append("null" if o is None else "true" if o else "false")
        elif kind is int:
            out.append(int.__repr__(o))  # type: ignore[arg-type]
        elif kind is float:
            if o != o or o in (_INF, -_INF):  # type: ignore[operator]
                raise _Unsure
            out.append(float.__repr__(o))  # type: ignore[arg-type]
        elif kind is list or kind is tuple or kind is dict:
            if id(o) in stack:
                raise _Unsure
            stack.add(id(o))
            inner = "\n" + pad * (level + 1)
            if kind is dict:
                items = sorted(o.items()) if sort_keys else o.items()  # type: ignore[attr-defined]
                if not items:
                    out.append("{}")
                else:
                    out.append("{")
                    for index, (key, item) in enumerate(items):
                        if type(key) is not str:
                            raise _Unsure
                        out.append(
                            (inner if index == 0 else item_separator + inner) + escape(key) + key_separator
                        )
                        value(item, level + 1)
                    out.append("\n" + pad * level + "}")
            elif not o:
                out.append("[]")
            else:
                out.append("[")
                for index, item in enumerate(o):  # type: ignore[attr-defined]
                    out.append(inner if index == 0 else item_separator + inner)
                    value(item, level + 1)
                out.append("\n" + pad * level + "]")
            stack.discard(id(o))
        else:
            raise _Unsure

    value(obj, 0)
    return "".join(out)


_INF = float("inf")
