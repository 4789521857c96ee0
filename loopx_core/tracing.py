"""Turns as OpenTelemetry traces: off (and nothing of OpenTelemetry imported) unless configured.

On when the `otel` extra is installed and the standard variables name a collector
(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`; `OTEL_TRACES_EXPORTER`
other than `otlp` or `OTEL_SDK_DISABLED=true` turn it off). Every governed turn is one trace:
`turn begin` draws its context and the journal keeps it (`trace_parent`), so every process
working on the turn (`run-once`, the host command through `TRACEPARENT`, `writeback`, `spend`,
closeout, cancel) adds its spans to the same trace; the root span `loopx.turn` is sent once,
when the turn ends, with the ids the journal holds. A turn begun untraced stays untraced. Spans are
batched; at exit they are flushed within a bounded wait, and a collector that cannot be reached
costs one warning line, never a changed exit code (docs/observability.md).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
TIMEOUTS = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
EXPORT_TIMEOUT_S = 2.0
"""How long one export may take unless the variables say otherwise (a tick must not wait on a
collector that is down)."""
FLUSH_TIMEOUT_MS = 3000
"""The most a process waits at exit for its spans to go."""
SERVICE = "loopx"

_state: dict[str, Any] = {}
_lock = threading.Lock()


def enabled() -> bool:
    """True when traces are configured and the `otel` extra is installed (checked once)."""
    if "on" not in _state:
        _state["on"] = _configured(os.environ) and _installed()
    return bool(_state["on"])


def _configured(env: Mapping[str, str]) -> bool:
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = {e.strip() for e in env.get("OTEL_TRACES_EXPORTER", "otlp").split(",")}
    return "otlp" in exporters and any(env.get(name) for name in ENDPOINTS)


def _installed() -> bool:
    from importlib.util import find_spec

    try:
        return (
            find_spec("opentelemetry.sdk") is not None
            and find_spec("opentelemetry.exporter.otlp") is not None
        )
    except (ImportError, ValueError):
        return False


def new_parent() -> str:
    """A fresh W3C `traceparent` for a turn's root span (random ids, as the SDK makes them)."""
    import secrets

    return f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01"


def trace_id(parent: str) -> str:
    """The trace id of a `traceparent`."""
    return parent.split("-")[1]


def valid(parent: str | None) -> bool:
    """A `traceparent` whose trace and span ids are not all zero (W3C: such ids are invalid)."""
    if not parent:
        return False
    parts = parent.split("-")
    try:
        return len(parts) == 4 and int(parts[1], 16) != 0 and int(parts[2], 16) != 0
    except ValueError:
        return False


def _ids(parent: str) -> tuple[int, int]:
    _, trace, span, _ = parent.split("-")
    return int(trace, 16), int(span, 16)


def _setup() -> dict[str, Any]:
    """The tracer provider (once per process): OTLP over HTTP, batched, flushed at exit."""
    with _lock:
        if "tracer" in _state:
            return _state
        import atexit
        import logging

        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
        from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator

        class PresetIds(IdGenerator):
            """Random ids, except for the root span of a turn, whose ids its journal holds."""

            def __init__(self) -> None:
                self.random = RandomIdGenerator()
                self.preset: tuple[int, int] | None = None

            def generate_trace_id(self) -> int:
                return self.preset[0] if self.preset else self.random.generate_trace_id()

            def generate_span_id(self) -> int:
                return self.preset[1] if self.preset else self.random.generate_span_id()

        class Counted(SpanExporter):
            """The OTLP exporter, each batch it could not deliver counted (its own logs stay quiet)."""

            def __init__(self, inner: SpanExporter) -> None:
                self.inner = inner

            def export(self, spans: Any) -> SpanExportResult:
                result = self.inner.export(spans)
                if result != SpanExportResult.SUCCESS:
                    _state["failed"] = True
                return result

            def shutdown(self) -> None:
                self.inner.shutdown()

            def force_flush(self, timeout_millis: int = 30000) -> bool:
                return self.inner.force_flush(timeout_millis)

        quiet = logging.getLogger("opentelemetry")  # its messages may quote the endpoint's secrets
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
        named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": SERVICE}
        if "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", ""):
            named = {}
        ids = PresetIds()
        provider = TracerProvider(resource=Resource.create(named), id_generator=ids, shutdown_on_exit=False)
        timeout = None if any(os.environ.get(name) for name in TIMEOUTS) else EXPORT_TIMEOUT_S
        provider.add_span_processor(BatchSpanProcessor(Counted(OTLPSpanExporter(timeout=timeout))))
        _state.update(
            provider=provider, ids=ids, tracer=provider.get_tracer("loopx"), sender=_sender(provider)
        )
        atexit.register(flush)
        return _state


def _sender(provider: Any) -> threading.Thread:
    """The thread that sends what is left at exit, started with the provider: Python 3.12+ starts
    no thread at interpreter shutdown, and the SDK's flush has no timeout of its own."""
    go = threading.Event()

    def send() -> None:
        go.wait()
        if not provider.force_flush(FLUSH_TIMEOUT_MS):
            _state["failed"] = True
        provider.shutdown()

    thread = threading.Thread(target=send, name="loopx-trace-flush", daemon=True)
    thread.start()
    _state["go"] = go
    return thread


def flush() -> None:
    """Send what is left, waiting at most `FLUSH_TIMEOUT_MS` whatever the exporter's own timeout;
    spans the collector did not take are one warning line (never its message: it may quote the
    endpoint's credentials)."""
    sender = _state.get("sender")
    if sender is None or _state.get("flushed"):
        return
    _state["flushed"] = True
    _state["go"].set()
    sender.join(FLUSH_TIMEOUT_MS / 1000)
    if sender.is_alive():
        why = f"not sent within {FLUSH_TIMEOUT_MS // 1000} s"
    elif _state.get("failed"):
        why = "the collector did not take them"
    else:
        return
    sys.stderr.write(f"loopx: warning: traces not exported to {_collector()}: {why}\n")


def _collector() -> str:
    """The collector as messages name it: scheme, host and port only (never a credential)."""
    from urllib.parse import urlsplit

    url = next((os.environ[name] for name in ENDPOINTS if os.environ.get(name)), "")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "the collector (its endpoint is not a valid URL)"
    if not parts.hostname or parts.scheme not in ("http", "https"):
        return "the collector (its endpoint is not an http or https URL)"
    return f"{parts.scheme}://{parts.hostname}" + (f":{port}" if port else "")


def _attributes(values: Mapping[str, Any]) -> dict[str, Any]:
    return {f"loopx.{k}": v for k, v in values.items() if v is not None}


def _parent(parent: str) -> Any:
    from opentelemetry import trace

    trace_id_, span_id = _ids(parent)
    context = trace.SpanContext(trace_id_, span_id, is_remote=True, trace_flags=trace.TraceFlags(1))
    return trace.set_span_in_context(trace.NonRecordingSpan(context))


@contextlib.contextmanager
def span(name: str, parent: str | None, **attributes: Any) -> Iterator[Any]:
    """A span `name` under the turn's root (`parent`, its traceparent), its status set from the
    error that ends it. Yields None when tracing is off or the turn is not traced (no parent)."""
    if not valid(parent) or not enabled():
        yield None
        return
    assert parent is not None
    from opentelemetry.trace import Status, StatusCode

    from loopx_core.errors import LoopxError

    tracer = _setup()["tracer"]
    with tracer.start_as_current_span(
        name,
        context=_parent(parent),
        attributes=_attributes(attributes),
        record_exception=False,
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except LoopxError as error:
            failed(current, error.code)
            raise
        except BaseException as error:
            current.set_status(Status(StatusCode.ERROR, type(error).__name__))
            raise


def failed(current: Any, code: str) -> None:
    """Mark a live span failed with LoopX's typed code (a refusal returned, not raised)."""
    from opentelemetry.trace import Status, StatusCode

    current.set_attribute("loopx.error_code", code)
    current.set_status(Status(StatusCode.ERROR, code))


def record(name: str, parent: str, started_ns: int, **attributes: Any) -> None:
    """A span that already happened (from `started_ns` until now), e.g. the decision before a turn."""
    if not valid(parent) or not enabled():
        return
    tracer = _setup()["tracer"]
    tracer.start_span(
        name, context=_parent(parent), start_time=started_ns, attributes=_attributes(attributes)
    ).end()


def child_traceparent(current: Any) -> str | None:
    """The W3C `traceparent` of a live span (for a host command's `TRACEPARENT`), None without one."""
    if current is None:
        return None
    context = current.get_span_context()
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"


def end_turn(parent: str, started: datetime, ended: datetime, status: str, **attributes: Any) -> None:
    """Send the turn's root span `loopx.turn` (once, when the turn ends: committed or stopped)."""
    if not valid(parent) or not enabled():
        return
    from opentelemetry.context import Context
    from opentelemetry.trace import Status, StatusCode

    state = _setup()
    with _lock:
        state["ids"].preset = _ids(parent)
        try:
            root = state["tracer"].start_span(
                "loopx.turn",
                context=Context(),
                start_time=_ns(started),
                attributes=_attributes({**attributes, "status": status}),
            )
        finally:
            state["ids"].preset = None
    if status != "committed":
        root.set_status(Status(StatusCode.ERROR, status))
    root.end(end_time=max(_ns(ended), _ns(started)))


def _ns(at: datetime) -> int:
    return int(at.timestamp() * 1_000_000_000)
