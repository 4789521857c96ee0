"""Class: a project edited by hand meets the lean settlement path exactly as the pydantic one.

People open `.loopx/` in an editor. What they save is often a file pydantic accepts that LoopX
would never have written: keys in another order, other whitespace, CRLF, no final newline, a
BOM, `1.0` for an int and `1` for a float, `1e-7` spelled out, `\\u00e9` and `\\/` escapes,
surrogate pairs, a time at another offset or with fractional seconds, a key given twice, an
optional field dropped or set to null, long text, emoji, escaped control characters, U+2028;
or one it refuses (an unknown field). Two properties:

- reading: every stored file kind (ledger and run-history lines through the canonical-line
  regex first) rendered so, read through the lean reader, gives pydantic's answer (the same
  values, or the same refusal line), and written back gives pydantic's bytes;
- settling: a settled project with some of its files so edited, then a script of settlement
  commands (`turn begin`, `writeback`, `turn spend` / `quota spend --turn-key`, `turn closeout`,
  `todo complete`, `quota spend --manual`) through `FileStore` and `LeanSettleStore` on two
  copies: after every command the same printed result (or error class, line and exit code),
  and the same bytes in every file.

Found by it (both in the generated lean reader, fixed there): a key given twice, where pydantic
validates both values of a dict field (`{"a": null, "a": {...}}` refused) but `json.loads`
keeps the last (lean accepted); an offset's minutes past 59 (`+00:60`), which
`datetime.fromisoformat` reads as an hour and pydantic refuses.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from loopx_core.cli.output import dumps
from loopx_core.errors import LoopxError
from loopx_core.kernel.algebra import StepKind
from loopx_core.kernel.results import turn_result
from loopx_core.models.ledger import LedgerEvent
from loopx_core.models.twins import to_json
from loopx_core.ops import spend, todos
from loopx_core.settlement import turns
from loopx_core.settlement.steps import TurnContext
from loopx_core.store import lean as lean_reads
from loopx_core.store.files import FileStore
from loopx_core.store.lean_store import LeanSettleStore, encode, encode_event, encode_history
from tests.builders import build_project, settle_turn, tree
from tests.conftest import T0
from tests.lean_documents import SEEDS, outcome, pydantic_outcome

# -- a hand-edited rendering of a JSON document -------------------------------------------------
FREE_TEXT = frozenset(
    ("objective", "title", "summary", "message", "reason", "detail", "progress_detail", "blocked_reason")
)
"""Keys whose value is free text (any text a person may type)."""
ODD_TEXT = st.sampled_from(
    [
        "é",
        "Ünïcödé",
        "\U0001f600",
        "a/b",
        "\x00",
        "\x1f",
        "\x7f",
        "\t\n",
        "\u2028",
        "\u2029",
        "\\",
        '"',
        "\u0085",
        "\ufeff",
        "\ud800",
        "\U0001f600\udfff",
        "x" * 5000,
    ]
)
"""Text a person adds to a free-text field (lone surrogates too: refused as pydantic refuses them)."""
OFFSETS = [timezone(timedelta(minutes=m)) for m in (0, 330, -480, 840, -720, 59, -1)]
"""The offsets a time is retyped at (the same instant)."""
ODD_VALUES = st.sampled_from([0, 1, "x", None, [], {}, 1.5, True, "2026-11-29T12:00:00Z"])
"""What a key given twice first holds (pydantic validates it in a dict field, ignores it in a model)."""


def _space(line: bool) -> st.SearchStrategy[str]:
    """JSON whitespace a person types (no newline inside a JSONL line)."""
    return st.sampled_from(["", " ", "\t", "\r"] if line else ["", " ", "  ", "\n", "\r\n", "\t", "\n    "])


def _char(char: str, how: int) -> str:
    """One character of a JSON string: as it is, `\\u` lower or upper case (a surrogate pair
    beyond the BMP), or `\\/` for a slash."""
    code = ord(char)
    if how == 0 or (how == 3 and char != "/"):
        return json.dumps(char, ensure_ascii=False)[1:-1]
    if how == 3:
        return "\\/"
    if code > 0xFFFF:
        code -= 0x10000
        text = f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    else:
        text = f"\\u{code:04x}"
    return text if how == 1 else text.replace("\\u", "\\U").upper().replace("\\U", "\\u")


KINDS = (
    "float",
    "space",
    "order",
    "escape",
    "number",
    "time",
    "unix",
    "offset",
    "twice",
    "null",
    "text",
    "end",
    "bom",
    "unknown",
)
"""The kinds of hand edit; a file gets some of them, each at its own rate."""


class _Style:
    """How one file was edited: for each kind of edit, how often (never, now and then, mostly)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.rarity = {kind: draw(st.sampled_from([None, None, 0, 2, 8])) for kind in KINDS}

    def odd(self, kind: str) -> bool:
        """Whether this token gets an edit of `kind`."""
        rarity = self.rarity[kind]
        return rarity is not None and self.draw(st.integers(0, rarity)) == 0


def _time_text(style: _Style, text: str) -> str:
    """A LoopX time retyped: the same instant at another offset, fractional seconds added or
    not, `+00:00` or `z` for UTC, a space for the `T`, an offset's digits typed by hand, a Unix
    time (pydantic judges the odd ones)."""
    draw = style.draw
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return json.dumps(text)
    if style.odd("unix"):  # pydantic reads a number as a Unix time (UTC)
        return str(int(when.timestamp()))
    if style.odd("time"):
        when = when.astimezone(draw(st.sampled_from(OFFSETS)))
        text = when.isoformat(timespec=draw(st.sampled_from(["seconds", "milliseconds", "microseconds"])))
        text = text.replace("+00:00", draw(st.sampled_from(["+00:00", "Z", "z"])))
        text = text.replace("T", draw(st.sampled_from(["T", "T", " ", "t"])))
    if style.odd("offset"):  # an offset typed by hand, whatever its digits
        hours, minutes = draw(st.integers(0, 25)), draw(st.integers(0, 99))
        form = draw(st.sampled_from(["{}{:02d}:{:02d}", "{}{:02d}{:02d}", "{}{:02d}:{:02d}:30", "{}{:02d}"]))
        text = text[:19] + form.format(draw(st.sampled_from("+-")), hours, minutes)
    return '"' + text + '"'


def _text(style: _Style, value: str) -> str:
    """A JSON string of `value`: its characters as they are, or (oddly) all of them `\\u`
    escaped in lower or upper case (surrogate pairs beyond the BMP), `\\/` for a slash, or
    each character its own way."""
    how = style.draw(st.integers(1, 4)) if style.odd("escape") else 0
    if how < 4 or len(value) > 40:  # one spelling for a long text (a draw a character overruns)
        return '"' + "".join(_char(c, how % 4) for c in value) + '"'
    hows = st.integers(0, 3)
    return '"' + "".join(_char(c, style.draw(hows)) for c in value) + '"'


def _number(style: _Style, value: bool | float) -> str:
    """A number or bool as typed: its JSON, or (oddly) `1.0` / `1e0` for an int, `1` for an
    integral float, `%.17g` / `%e` / 20 decimals, the number's text in a string, 0/1 or a word
    for a bool (pydantic's lax mode takes them all for the field's type)."""
    if isinstance(value, bool):
        text = json.dumps(value)
        odd = [str(int(value)), f'"{text}"', '"yes"' if value else '"off"']
    elif isinstance(value, int):
        text = str(value)
        odd = [f"{value}.0", f"{value}e0", f"{value}E+0", f'"{value}"']
    else:
        if style.odd("float"):  # another quantity typed in: big, tiny, subnormal
            value = style.draw(st.sampled_from([1e-7, 1e16, 5e-324, 0.1, 1e22, 2.5, 1e-5, 1e300]))
        text = repr(value)
        odd = [f"{value:.17g}", f"{value:e}", f"{value:.20f}", f'"{value!r}"']
        if value == int(value) and abs(value) < 1e15:
            odd.append(str(int(value)))
    return style.draw(st.sampled_from(odd)) if style.odd("number") else text


def rendered(style: _Style, value: Any, line: bool = False, key: str | None = None) -> str:
    """`value` as a person may have typed it (same meaning, or one pydantic judges)."""
    draw = style.draw

    def space() -> str:
        return draw(_space(line)) if style.odd("space") else ""

    if isinstance(value, dict):
        items = list(value.items())
        if style.odd("order"):
            items = draw(st.permutations(items))
        parts = []
        for name, inner in items:
            if style.odd("twice"):  # the key given twice, the first time with another value
                parts.append(_text(style, name) + ":" + rendered(style, draw(ODD_VALUES), line))
            typed = rendered(style, inner, line, name)
            parts.append(space() + _text(style, name) + space() + ":" + space() + typed + space())
        return "{" + ",".join(parts) + space() + "}"
    if isinstance(value, list):
        return "[" + ",".join(space() + rendered(style, v, line, key) + space() for v in value) + "]"
    if isinstance(value, str):
        if key is not None and (key.endswith("_at") or key in ("at", "until", "since")):
            return _time_text(style, value)
        if (key in FREE_TEXT or key == "evidence") and style.odd("text"):
            value += draw(ODD_TEXT)
        return _text(style, value)
    if value is None:
        return "null"
    return _number(style, value)


def edited_value(style: _Style, doc: Any, optional: frozenset[str] = frozenset()) -> Any:
    """`doc` with its values edited as a person may: a null dropped, an absent optional field
    (of `optional`) set to null, an unknown field added (refused by both)."""
    if isinstance(doc, list):
        return [edited_value(style, v) for v in doc]
    if not isinstance(doc, dict):
        return doc
    out = {}
    for name, value in doc.items():
        if value is None and style.odd("null"):
            continue  # an optional field left out
        out[name] = edited_value(style, value)
    for name in sorted(optional - set(doc)):
        if style.odd("null"):
            out[name] = None
    if style.odd("unknown") and style.odd("unknown"):
        out["note"] = "mine"
    return out


@st.composite
def hand_edited(draw: st.DrawFn, data: bytes, *, jsonl: bool) -> bytes:
    """A stored file's bytes as a person saves it after editing (every line of a JSONL file):
    some kinds of edit, each now and then or throughout."""
    style = _Style(draw)
    if jsonl:
        out = []
        for text in data.decode().splitlines():
            optional = _LEDGER_OPTIONAL if '"event_id"' in text else frozenset()
            end = draw(st.sampled_from(["\r", " "])) if style.odd("end") else ""
            out.append(rendered(style, edited_value(style, json.loads(text), optional), True) + end)
        body = "\n".join(out) + (draw(st.sampled_from(["\r\n", "\n\n"])) if style.odd("end") else "\n")
    else:
        body = rendered(style, edited_value(style, json.loads(data)))
        if style.odd("space"):
            body = draw(_space(False)) + body + draw(_space(False))
        body += draw(st.sampled_from(["", "\r\n", "\n\n"])) if style.odd("end") else "\n"
        if style.odd("end"):
            body = body.replace("\n", "\r\n")
    encoded = body.encode("utf-8", "surrogatepass")
    return b"\xef\xbb\xbf" + encoded if style.odd("bom") and style.odd("bom") else encoded


_LEDGER_OPTIONAL = frozenset(n for n, f in LedgerEvent.model_fields.items() if f.default is None)
"""The ledger's optional fields: LoopX leaves them out of a line (`exclude_none`), a person may not."""


# -- property 1: one file read and written back ------------------------------------------------
def _written_back(name: str, data: bytes) -> tuple[bytes, bytes]:
    """The bytes the lean store and pydantic write for the document `data` (a `name`) read back."""
    read = lean_reads.parse(data, name, where="f.json", what="file")
    model = lean_reads.validated(data, name, where="f.json", what="file")
    if name == "LedgerEvent":
        return encode_event(read), model.model_dump_json(exclude_none=True).encode()
    if name == "RunIndexEntry":
        plain = json.dumps(model.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))
        return encode_history(read), plain.encode()
    return encode(read), model.model_dump_json(indent=2).encode() + b"\n"


def _seed_edited(name: str) -> st.SearchStrategy[bytes]:
    """A seed document of `name` as a person may have edited it (a JSONL kind: one line)."""
    line = name in ("LedgerEvent", "RunIndexEntry")
    data = json.dumps(SEEDS[name]).encode()
    return hand_edited(data, jsonl=line).map(lambda b: b.rstrip(b"\r\n") if line else b)


TWICE = b'{"schema_version":1,"goal_id":"g","agents":{"a":null,"a":{"paused":true}}}'
"""Found: a key given twice; pydantic validates the first value of a dict field and refuses."""
OFFSET_60 = b'{"schema_version":1,"goal_id":"g","agents":{"a":{"acked_at":"2026-11-29T12:00:00+00:60"}}}'
"""Found: `fromisoformat` reads offset minutes of 60 as an hour; pydantic refuses them."""


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(SEEDS)).flatmap(lambda n: st.tuples(st.just(n), _seed_edited(n))))
@example(("SchedulerState", TWICE))
@example(("SchedulerState", OFFSET_60))
@example(("LedgerEvent", json.dumps(SEEDS["LedgerEvent"]).replace('"at": "', '"at": "\\u0032').encode()))
def test_a_hand_edited_file_reads_and_writes_back_as_pydantic_does(case: tuple[str, bytes]) -> None:
    name, data = case
    expected = pydantic_outcome(name, data)
    assert outcome(lambda: lean_reads.parse(data, name, where="f.json", what="file")) == expected
    if expected[0] == "ok":
        lean_bytes, pydantic_bytes = _written_back(name, data)
        assert lean_bytes == pydantic_bytes
    if data in (TWICE, OFFSET_60):
        assert expected[0] == "refused"


# -- property 2: settlement commands on a hand-edited project ----------------------------------
AGENTS = ("a", "b", "c")
TODOS = ("t1", "t2", "t3", "t4")
TEXT = st.sampled_from(["", "did it", "é ü \u2028 \x1f \x7f", "\U0001f600", "x" * 300, 'a/b \\ "'])
FILES = {
    "registry": ".loopx/registry.json",
    "state": ".loopx/goals/g/state.json",
    "ledger": ".loopx/goals/g/events.jsonl",
    "history": ".loopx/goals/g/runs/index.jsonl",
    "receipts": ".loopx/goals/g/receipts.json",
    "scheduler": ".loopx/goals/g/scheduler.json",
    "settled journal": "SETTLED",
    "open journal": "OPEN",
    "run record": "RUN",
}
OPS = st.one_of(
    st.tuples(
        st.just("begin"),
        st.sampled_from(AGENTS),
        st.sampled_from((*TODOS, None)),
        st.sampled_from([30.0, 1.0, 0.5, 1e-7, 90.25]),
    ),
    st.tuples(
        st.just("writeback"),
        st.sampled_from(AGENTS),
        st.booleans(),
        TEXT,
        st.lists(TEXT, max_size=2),
        st.sampled_from([True, False, None]),
        st.sampled_from([None, "tests only"]),
        st.booleans(),
    ),
    st.tuples(st.just("spend"), st.sampled_from(AGENTS), st.booleans(), st.sampled_from([None, 1, 3])),
    st.tuples(st.just("closeout"), st.sampled_from(AGENTS), st.booleans()),
    st.tuples(
        st.just("complete"),
        st.sampled_from((*AGENTS, None)),
        st.sampled_from(TODOS),
        st.lists(TEXT, max_size=2),
    ),
    st.tuples(
        st.just("manual spend"),
        st.sampled_from(AGENTS),
        st.sampled_from((*TODOS, None)),
        st.sampled_from([(1, None), (None, 7.5), (None, 1e-7), (2, None)]),
    ),
    st.tuples(st.just("wait"), st.sampled_from([1, 31, 90, 60 * 24 * 8])),
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A settled project: a's turn on t1 committed and spent (ledger, history, run record,
    receipts), t1 completed, b's turn on t2 open, a scheduler file; and the turn files' paths."""
    root = tmp_path_factory.mktemp("template")
    store = build_project(root, agents=AGENTS, todo_count=len(TODOS), compute=0.5, slot_minutes=5.0)
    settled = settle_turn(store, "a", "t1")
    todos.complete_todo(store, "g", "t1", T0, agent_id="a", evidence=["ok"])
    opened, _ = turns.begin_turn(store, "g", "b", T0, todo_id="t2")
    (root / FILES["scheduler"]).write_text(
        '{\n  "schema_version": 1,\n  "goal_id": "g",\n  "agents": {\n    "a": {\n'
        '      "applied_rrule": "FREQ=HOURLY",\n      "paused": false,\n      "unchanged_polls": 2,\n'
        '      "acked_at": "2026-11-29T12:00:00Z",\n      "failures": 0\n    }\n  }\n}\n'
    )
    turns_dir = ".loopx/goals/g/turns/"
    runs = sorted((root / ".loopx/goals/g/runs").glob("run-*.json"))
    paths = {
        "SETTLED": turns_dir + settled.turn_key[7:] + ".json",
        "OPEN": turns_dir + opened.turn_key[7:] + ".json",
        "RUN": str(runs[0].relative_to(root)),
        "settled key": settled.turn_key,
    }
    return root, paths


def _key(store: Any, agent: str, old: bool, settled: str) -> str | None:
    """The turn a command names: the agent's open turn, or (`old`) the settled turn of a."""
    return settled if old else store.read_goal("g").open_turns.get(agent)


def _apply(store: Any, op: tuple[Any, ...], now: datetime, settled: str) -> Any:
    """One settlement command on `store` at `now`: what it prints, as JSON."""
    kind, *args = op
    if kind == "begin":
        agent, todo, minutes = args
        journal, replayed = turns.begin_turn(
            store, "g", agent, now, todo_id=todo, replan=todo is None, lease_minutes=minutes
        )
        return {**turn_result(journal), "replayed": replayed}
    if kind == "complete":
        agent, todo, evidence = args
        return to_json(
            todos.complete_todo(store, "g", todo, now, agent_id=agent, evidence=evidence), exclude_none=True
        )
    if kind == "manual spend":
        agent, todo, (slots, minutes) = args
        return spend.spend(store, "g", agent, now, todo_id=todo, slots=slots, minutes=minutes).to_json()
    key = _key(store, args[0], args[1], settled)
    if key is None:
        return "no open turn"
    ctx = TurnContext(store, "g", args[0], key, lambda: now)
    if kind == "writeback":
        ctx.summary, ctx.evidence, ctx.validation_passed, ctx.no_progress, ctx.no_followup = args[2:]
        return turns.writeback_turn(ctx, adapter="cli")
    if kind == "spend":
        ctx.slots = args[2]
        return turns.settle_steps(ctx, [StepKind.QUOTA_SPEND], adapter="cli")
    return turns.settle_steps(ctx, [StepKind.TERMINAL_CLOSEOUT], adapter="cli")


def _printed(store: Any, op: tuple[Any, ...], now: datetime, settled: str) -> tuple[Any, ...]:
    """What the command prints (its JSON line), or its error's class, line and exit code."""
    try:
        return ("ok", dumps(_apply(store, op, now, settled)))
    except LoopxError as error:
        return ("error", type(error).__name__, str(error), int(error.exit_code))
    except Exception as error:  # an internal error must at least be the same one
        return ("internal", type(error).__name__, str(error))


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_settlement_commands_on_a_hand_edited_project_agree_through_both_stores(
    template: tuple[Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    source, paths = template
    chosen = data.draw(st.lists(st.sampled_from(sorted(FILES)), min_size=1, max_size=4, unique=True))
    edits = {}
    for which in chosen:
        relative = paths.get(FILES[which], FILES[which])
        edits[relative] = data.draw(
            hand_edited((source / relative).read_bytes(), jsonl=relative.endswith(".jsonl"))
        )
    script = data.draw(st.lists(OPS, min_size=1, max_size=6))
    base = tmp_path_factory.mktemp("edited")
    roots = {}
    for cls in (FileStore, LeanSettleStore):
        roots[cls] = base / cls.__name__
        shutil.copytree(source, roots[cls])
        for relative, content in edits.items():
            (roots[cls] / relative).write_bytes(content)
    slow, lean = FileStore(roots[FileStore]), LeanSettleStore(roots[LeanSettleStore])
    now = T0 + timedelta(minutes=5)
    for op in script:
        if op[0] == "wait":
            now += timedelta(minutes=op[1])
            continue
        expected = _printed(slow, op, now, paths["settled key"])
        event(f"{op[0]}: {expected[0] if expected[0] != 'error' else expected[1]}")
        assert expected[0] != "internal", (op, expected)
        assert _printed(lean, op, now, paths["settled key"]) == expected, (op, edits)
        assert tree(roots[LeanSettleStore]) == tree(roots[FileStore]), (op, edits)
