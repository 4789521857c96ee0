"""Reading an installed facade as its host would: strict parsers and the commands a facade holds.

Not a test module: tests/test_facade_semantics.py checks every generated file with these, and
tests/hostsim.py drives the host loops from what they find on disk (never from plugin code).
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:  # PyYAML arrives with a tool's dependency; the subset parser below never needs it
    import yaml as pyyaml
except ImportError:  # pragma: no cover - depends on the environment
    pyyaml = None


class FacadeError(ValueError):
    """A generated file that its host's parser would refuse, or that lacks what the host reads."""


# -- strict parsers ----------------------------------------------------------------------
def strict_json(text: str) -> Any:
    """JSON as a strict host reads it: no NaN/Infinity, no duplicate keys."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        duplicates = sorted({k for k in keys if keys.count(k) > 1})
        if duplicates:
            raise FacadeError(f"duplicate JSON keys {duplicates}")
        return dict(items)

    def constant(name: str) -> Any:
        raise FacadeError(f"non-standard JSON constant {name}")

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except json.JSONDecodeError as bad:
        raise FacadeError(f"invalid JSON: {bad}") from None


def strict_toml(text: str) -> dict[str, Any]:
    """TOML 1.0 (tomllib refuses duplicate keys and tables on its own)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as bad:
        raise FacadeError(f"invalid TOML: {bad}") from None


_PLAIN_INT = re.compile(r"-?(0|[1-9][0-9]*)")
_KEY = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*):(?: (.*))?")


def _scalar(raw: str) -> Any:
    raw = raw.strip()
    if raw.startswith('"'):
        if not raw.endswith('"') or len(raw) < 2:
            raise FacadeError(f"unterminated double-quoted scalar {raw[:40]!r}")
        return strict_json(raw)  # YAML double quotes escape as JSON does for what we generate
    if raw.startswith("'"):
        if not raw.endswith("'") or len(raw) < 2:
            raise FacadeError(f"unterminated single-quoted scalar {raw[:40]!r}")
        inner = raw[1:-1]
        if re.search(r"(?<!')'(?!')", inner):
            raise FacadeError(f"stray quote in {raw[:40]!r}")
        return inner.replace("''", "'")
    if raw in ("true", "false"):
        return raw == "true"
    if raw in ("null", "~", ""):
        return None
    if _PLAIN_INT.fullmatch(raw):
        return int(raw)
    if raw[0] in "[]{}&*!|>%@`#,?" or ": " in raw or " #" in raw:
        raise FacadeError(f"YAML beyond the block subset LoopX generates: {raw[:40]!r}")
    return raw


def subset_yaml(text: str) -> Any:
    """Block-style YAML (mappings, `- ` sequences, quoted or plain scalars), strictly.

    The structural check used when PyYAML is absent, and cross-checked against it when present:
    tabs, flow collections, anchors, duplicate keys and bad indentation are refused.
    """
    lines: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if "\t" in line:
            raise FacadeError(f"tab in YAML line {number}")
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            lines.append((len(line) - len(line.lstrip(" ")), stripped))
    value, rest = _block(lines, 0, lines[0][0] if lines else 0)
    if rest != len(lines):
        raise FacadeError(f"YAML indentation breaks at {lines[rest][1][:40]!r}")
    return value


def _block(lines: list[tuple[int, str]], at: int, indent: int) -> tuple[Any, int]:
    if at >= len(lines):
        return None, at
    if lines[at][1].startswith("- ") or lines[at][1] == "-":
        items: list[Any] = []
        while at < len(lines) and lines[at][0] == indent and lines[at][1].startswith("-"):
            body = lines[at][1][1:].lstrip(" ")
            inner = indent + len(lines[at][1]) - len(body)
            if not body:
                value, at = _block(lines, at + 1, lines[at + 1][0]) if at + 1 < len(lines) else (None, at + 1)
            else:
                # "- key: value" opens a mapping whose later keys sit at the item's indent
                value, at = _block([*lines[:at], (inner, body), *lines[at + 1 :]], at, inner)
            items.append(value)
        return items, at
    mapping: dict[str, Any] = {}
    while at < len(lines) and lines[at][0] == indent:
        match = _KEY.fullmatch(lines[at][1])
        if match is None:
            raise FacadeError(f"not a YAML mapping line: {lines[at][1][:40]!r}")
        key, raw = match.group(1), match.group(2)
        if key in mapping:
            raise FacadeError(f"duplicate YAML key {key!r}")
        if raw is None or raw == "":
            nxt = lines[at + 1][0] if at + 1 < len(lines) else -1
            if nxt > indent or (nxt == indent and lines[at + 1][1].startswith("- ")):
                mapping[key], at = _block(lines, at + 1, nxt)
                continue
            mapping[key] = None
        else:
            mapping[key] = _scalar(raw)
        at += 1
    if at < len(lines) and lines[at][0] > indent:
        raise FacadeError(f"unexpected indentation at {lines[at][1][:40]!r}")
    return mapping, at


def strict_yaml(text: str) -> Any:
    """YAML by the subset parser, and by PyYAML (duplicate keys refused) when it is installed;
    the two must agree."""
    ours = subset_yaml(text)
    if pyyaml is not None:

        class Strict(pyyaml.SafeLoader):
            """SafeLoader refusing duplicate keys."""

        def mapping(loader: Strict, node: Any) -> dict[Any, Any]:
            keys = [loader.construct_object(k) for k, _ in node.value]
            if len(keys) != len(set(keys)):
                raise FacadeError(f"duplicate YAML keys in {keys}")
            return dict(loader.construct_pairs(node))

        Strict.add_constructor(pyyaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
        try:
            theirs = pyyaml.load(text, Loader=Strict)  # a SafeLoader subclass
        except pyyaml.YAMLError as bad:
            raise FacadeError(f"invalid YAML: {bad}") from None
        if theirs != ours:
            raise FacadeError(f"YAML read two ways: {theirs!r} != {ours!r}")
    return ours


def front_matter(text: str) -> tuple[dict[str, Any] | None, str]:
    """Markdown front matter (a YAML mapping between `---` lines) and the body after it."""
    if not text.startswith("---\n"):
        return None, text
    end = text.find("\n---\n", 4)
    if end < 0:
        raise FacadeError("front matter opened with --- is never closed")
    meta = strict_yaml(text[4 : end + 1])
    if not isinstance(meta, dict):
        raise FacadeError("front matter is not a mapping")
    return meta, text[end + 5 :]


KINDS = {".json": "json", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".md": "markdown", ".js": "js"}


def parse(path: Path) -> Any:
    """A generated file parsed by its kind (Markdown: (front matter, body); JS: its text)."""
    kind = KINDS.get(path.suffix)
    text = path.read_text(encoding="utf-8")
    if kind == "json":
        return strict_json(text)
    if kind == "toml":
        return strict_toml(text)
    if kind == "yaml":
        return strict_yaml(text)
    if kind == "markdown":
        return front_matter(text)
    if kind == "js":
        return text
    raise FacadeError(f"no parser for the kind of {path.name}: add one to tests/facades.py")


def installed_files(*bases: Path) -> list[Path]:
    """Every file under `bases` except LoopX's own `.loopx/` folders."""
    return sorted(
        p
        for base in bases
        if base.exists()
        for p in base.rglob("*")
        if p.is_file() and ".loopx" not in p.parts
    )


# -- the commands a facade hands its host --------------------------------------------------
@dataclass(frozen=True)
class HookCommand:
    """One `{"type": "command"}` hook of a Claude settings or hooks file."""

    event: str
    command: str
    timeout: float | None


def claude_hooks(document: Any, event: str) -> list[HookCommand]:
    """The command hooks a Claude settings/hooks.json document runs for `event` (no matcher for Stop)."""
    out: list[HookCommand] = []
    for entry in (document or {}).get("hooks", {}).get(event, []):
        for hook in entry.get("hooks", []):
            if hook.get("type") == "command":
                out.append(HookCommand(event, hook["command"], hook.get("timeout")))
    return out


def claude_settings_hooks(paths: list[Path], event: str) -> list[HookCommand]:
    """Every `event` hook of the settings files Claude Code reads, in its order (user, project, local)."""
    return [
        hook
        for path in paths
        if path.is_file()
        for hook in claude_hooks(strict_json(path.read_text()), event)
    ]


_BACKTICKED = re.compile(r"`([^`\n]+)`")
_LOOPX_HERE = re.compile(r"The LoopX command here is `([^`]+)`")
_RUN_AS = re.compile(r"^Run `loopx` as (.+)\.$", re.M)
NUMBERED_ACTION = re.compile(r"^\d+\. (loopx .*)$", re.M)


def loopx_command_named(text: str) -> list[str]:
    """The LoopX command (as argv words) a facade text tells the agent to use; `loopx` by default."""
    found = _LOOPX_HERE.search(text) or _RUN_AS.search(text)
    return shlex.split(found.group(1)) if found else ["loopx"]


def backticked_commands(text: str, loopx: list[str]) -> list[list[str]]:
    """Every backticked span of `text` that is a whole LoopX command line (argv words)."""
    out = []
    for span in _BACKTICKED.findall(text):
        try:
            words = shlex.split(span)
        except ValueError:
            continue
        if len(words) > len(loopx) and words[: len(loopx)] == loopx:
            out.append(words)
    return out


def numbered_actions(text: str) -> list[str]:
    """The `N. loopx ...` lines of a hook reason or steering message, in order."""
    return NUMBERED_ACTION.findall(text)


def packet_paths(text: str) -> list[str]:
    """The packet fields (dotted paths in backticks) an instruction text points at."""
    return [span for span in _BACKTICKED.findall(text) if re.fullmatch(r"[a-z_]+(\.[a-z_]+)+", span)]


def resolve(packet: dict[str, Any], dotted: str) -> Any:
    """`a.b.c` of a packet; KeyError naming the path when it is not there."""
    node: Any = packet
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(f"the packet has no {dotted}")
        node = node[part]
    return node


@dataclass(frozen=True)
class HeartbeatPrompt:
    """What a Codex automation's prompt tells the agent to run, read from the prompt itself."""

    loopx: list[str]
    should_run: list[str]
    actions_path: str
    rrule_path: str
    ack_path: str
    failure_path: str

    @classmethod
    def parse(cls, prompt: str) -> HeartbeatPrompt:
        """Find the LoopX command, the should-run command and the packet fields the prompt names."""
        loopx = loopx_command_named(prompt)
        should = [
            w
            for w in backticked_commands(prompt, loopx)
            if w[len(loopx) : len(loopx) + 2] == ["quota", "should-run"]
        ]
        paths = packet_paths(prompt)

        def one(suffix: str) -> str:
            hits = sorted({p for p in paths if p.endswith(suffix)})
            if len(hits) != 1:
                raise FacadeError(
                    f"the heartbeat prompt names {hits or 'no'} packet field ending in {suffix}"
                )
            return hits[0]

        if len(should) != 1:
            raise FacadeError(f"the heartbeat prompt has {len(should)} should-run commands, not one")
        return cls(
            loopx,
            should[0],
            one("next_cli_actions"),
            one("recommended_rrule"),
            one("ack_hint.cli_args"),
            one("failure_hint.cli_args"),
        )


def codex_automations(codex_home: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every `automation.toml` under `$CODEX_HOME/automations/`, parsed."""
    folder = codex_home / "automations"
    paths = sorted(folder.glob("*/automation.toml")) if folder.is_dir() else []
    return [(path, strict_toml(path.read_text())) for path in paths]


def dsh_packages(*folders: Path) -> list[Path]:
    """Package folders under `folders` that are DSH native plugins (`dsh.bundle.patch` in package.json)."""
    out = []
    for folder in folders:
        for manifest in sorted(folder.glob("*/package.json")) if folder.is_dir() else []:
            if isinstance(
                strict_json(manifest.read_text()).get("dsh", {}).get("bundle", {}).get("patch"), str
            ):
                out.append(manifest.parent)
    return out


def dsh_modules(package: Path) -> list[tuple[str, Path]]:
    """(row id, module file) for each loader row of the package's cordis patch, via its exports."""
    manifest = strict_json((package / "package.json").read_text())
    patch_file = package / manifest["dsh"]["bundle"]["patch"]
    if not patch_file.is_file():
        raise FacadeError(f"the package's bundle patch {patch_file.name} is missing")
    patch = strict_yaml(patch_file.read_text())
    out = []
    for step in patch:
        for row in step["insert"]:
            owner, _, module = row["name"].partition("/")
            if owner != manifest["name"]:
                raise FacadeError(f"row {row['id']} names package {owner!r}, not {manifest['name']!r}")
            target = manifest["exports"].get(f"./{module}")
            if not isinstance(target, str):
                raise FacadeError(f"row {row['id']}: the package exports no ./{module}")
            out.append((row["id"], (package / target).resolve()))
    return out
