"""An OTLP receiver for the tests: it takes the spans and metrics a process exports over
OTLP HTTP/protobuf (POST /v1/traces, /v1/metrics), parsed with OpenTelemetry's own
protobuf definitions (the opentelemetry-proto package), and keeps each span flattened to a
dict (its trace, span and parent ids in hex, name, kind, attributes, links, status, and
the service) and each histogram point too (name, unit, attributes, count, sum, bounds).

Used in-process (`Receiver()`, then `.spans()`, `.wait_for(...)`, `.stop()`), or run on
its own: it prints its port on its first line and serves what it holds at GET /spans.
`Receiver(grpc=True)` also takes OTLP over gRPC (grpcio, with the service definitions
opentelemetry-proto ships), on `.grpc_port`.
"""

import gzip
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

KINDS = {value: name.removeprefix("SPAN_KIND_") for name, value in Span.SpanKind.items()}
STATUSES = {value: name.removeprefix("STATUS_CODE_") for name, value in Status.StatusCode.items()}


def _value(any_value):
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in any_value.array_value.values]
    if kind is None:
        return None
    return getattr(any_value, kind)


def _attributes(pairs):
    return {pair.key: _value(pair.value) for pair in pairs}


def flatten(request):
    """The spans of one export request, as dicts."""
    spans = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append({
                    "service": resource.get("service.name"),
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex() or None,
                    "name": span.name,
                    "kind": KINDS.get(span.kind, str(span.kind)),
                    "attributes": _attributes(span.attributes),
                    "events": [event.name for event in span.events],
                    "links": [{"trace_id": link.trace_id.hex(), "span_id": link.span_id.hex()}
                              for link in span.links],
                    "status": STATUSES.get(span.status.code, str(span.status.code)),
                    "status_message": span.status.message,
                    "start": span.start_time_unix_nano,
                    "end": span.end_time_unix_nano,
                })
    return spans


def flatten_metrics(request):
    """The histogram points of one metrics export request, as dicts."""
    points = []
    for resource_metrics in request.resource_metrics:
        resource = _attributes(resource_metrics.resource.attributes)
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                if metric.WhichOneof("data") != "histogram":
                    continue
                for point in metric.histogram.data_points:
                    points.append({
                        "service": resource.get("service.name"),
                        "name": metric.name,
                        "unit": metric.unit,
                        "attributes": _attributes(point.attributes),
                        "count": point.count,
                        "sum": point.sum,
                        "bounds": list(point.explicit_bounds),
                    })
    return points


class Receiver:
    """An OTLP/HTTP receiver on 127.0.0.1, on a port the system picks (and OTLP/gRPC on
    another, with `grpc=True`)."""

    def __init__(self, grpc=False):
        self._spans = []
        self._points = []
        self._lock = threading.Lock()
        self._answering = threading.Event()
        self._answering.set()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                receiver._answering.wait()
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/traces":
                    spans = flatten(ExportTraceServiceRequest.FromString(body))
                    with receiver._lock:
                        receiver._spans.extend(spans)
                    answer = ExportTraceServiceResponse().SerializeToString()
                elif self.path == "/v1/metrics":
                    points = flatten_metrics(ExportMetricsServiceRequest.FromString(body))
                    with receiver._lock:
                        receiver._points.extend(points)
                    answer = ExportMetricsServiceResponse().SerializeToString()
                else:
                    self.send_error(404)
                    return
                self.reply("application/x-protobuf", answer)

            def do_GET(self):
                if self.path != "/spans":
                    self.send_error(404)
                    return
                self.reply("application/json", json.dumps(receiver.spans()).encode())

            def reply(self, content_type, body):
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self._grpc = self._start_grpc() if grpc else None

    def _start_grpc(self):
        from concurrent.futures import ThreadPoolExecutor

        import grpc as grpcio
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

        receiver = self

        class Traces(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request, context):
                with receiver._lock:
                    receiver._spans.extend(flatten(request))
                return ExportTraceServiceResponse()

        class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
            def Export(self, request, context):
                with receiver._lock:
                    receiver._points.extend(flatten_metrics(request))
                return ExportMetricsServiceResponse()

        server = grpcio.server(ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)
        self.grpc_port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        return server

    def spans(self):
        with self._lock:
            return list(self._spans)

    def points(self):
        """The histogram points received so far (each export repeats the totals so far)."""
        with self._lock:
            return list(self._points)

    def wait_for_point(self, found, timeout=30):
        """The latest histogram point `found` accepts, waiting up to `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            matching = [point for point in self.points() if found(point)]
            if matching:
                return matching[-1]
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)

    def wait_for(self, found, timeout=30):
        """The first span `found` accepts, waiting up to `timeout` seconds; None if none came."""
        deadline = time.monotonic() + timeout
        while True:
            for span in self.spans():
                if found(span):
                    return span
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)

    def stall(self):
        """Takes exports but never answers them (until stopped), as a collector that hangs."""
        self._answering.clear()

    def stop(self):
        """Stops listening: exports to it fail from now on, as to a collector that is down."""
        self._server.shutdown()
        self._server.server_close()
        self._answering.set()
        if self._grpc is not None:
            self._grpc.stop(grace=None)


if __name__ == "__main__":
    receiver = Receiver()
    print(receiver.port, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        sys.exit(0)
