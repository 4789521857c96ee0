"""A local OTLP/HTTP trace receiver: what a collector would get, decoded with opentelemetry-proto."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class Span:
    """One received span, flattened."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    status: int
    """0 unset, 1 ok, 2 error."""
    status_message: str
    service: str
    start_ns: int = 0
    end_ns: int = 0


@dataclass
class Receiver:
    """The spans received so far, and where to send them."""

    endpoint: str
    spans: list[Span] = field(default_factory=list)
    delay_s: float = 0.0

    def wait_for(self, name: str, count: int = 1, timeout: float = 15) -> list[Span]:
        """The spans called `name`, once at least `count` arrived."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [s for s in self.spans if s.name == name]
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"{count} span(s) {name!r} not received; got {[s.name for s in self.spans]}")


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def decode(body: bytes) -> list[Span]:
    """The spans of one OTLP/HTTP protobuf export request."""
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    out = []
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                out.append(
                    Span(
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        attributes={a.key: _value(a.value) for a in span.attributes},
                        status=span.status.code,
                        status_message=span.status.message,
                        service=str(resource.get("service.name", "")),
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                    )
                )
    return out


@contextmanager
def receiving(delay_s: float = 0.0) -> Iterator[Receiver]:
    """A receiver on a free loopback port (`delay_s`: how long it takes to answer)."""
    receiver = Receiver("")
    receiver.delay_s = delay_s

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            time.sleep(receiver.delay_s)
            if self.path == "/v1/traces":
                receiver.spans.extend(decode(body))
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
