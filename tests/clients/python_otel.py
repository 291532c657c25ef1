"""Traces, proven with real parts: a server of ours exports its spans over OTLP to a
receiver built on OpenTelemetry's own protobuf definitions, while the official Python MCP
SDK, instrumented with the OpenTelemetry SDK, calls its tools over Streamable HTTP in both
protocol eras. The server's span of each call must be the child of the client's, and the
tool's own span the child of the server's; the trace context also comes by HTTP header; a
malformed one is ignored; a collector that stops loses spans, never calls; the spans still
queued are sent when the server stops.

An agent of ours (the agent loop against a scripted OpenAI-compatible model, with the
tools of a second process of ours mounted) exports one trace from its run down to the
tool's own span in the other process.

Usage: python_otel.py TRACED_TOOLS_BINARY TRACED_AGENT_BINARY [--picture PATH]
(with --picture, the agent's trace is also drawn, as the README shows it)
"""

import json
import re
import os
import signal
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import sys
import time
import urllib.error
import urllib.request

import anyio
from checks import PATIENCE, check, finish, serve_http, server_log
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otlp_receiver import Receiver
from trace_picture import svg

# How long our server's exporter waits for the receiver (a Python thread of this process,
# slow on a machine kept busy by other work): an export given up is lost, and the span it
# carried never arrives.
EXPORT_TIMEOUT_MS = str(int(PATIENCE * 1000))

SERVER = sys.argv[1]
AGENT = sys.argv[2]
PICTURE = sys.argv[sys.argv.index("--picture") + 1] if "--picture" in sys.argv else None
PARENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"
HEADER_SPAN = "b7ad6b7169203331"

client_spans = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(client_spans))
trace.set_tracer_provider(provider)


def sent_span(tool):
    """The SDK's last span sending `tools/call` of `tool`, if any."""
    sent = [span for span in client_spans.get_finished_spans()
            if span.attributes.get("mcp.method.name") == "tools/call" and span.name.endswith(f" {tool}")]
    return sent[-1] if sent else None


def client_span_of(tool):
    """The trace and span ids (hex) of the SDK's last span sending `tools/call` of `tool`."""
    sent = sent_span(tool)
    if sent is None:
        return None, None
    context = sent.get_span_context()
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


def client_span_of_method(method):
    sent = [span for span in client_spans.get_finished_spans() if span.attributes.get("mcp.method.name") == method]
    if not sent:
        return None
    return f"{sent[-1].get_span_context().trace_id:032x}"


def server_span(receiver, tool, trace_id=None, timeout=30):
    return receiver.wait_for(
        lambda span: span["name"] == f"tools/call {tool}" and trace_id in (None, span["trace_id"]),
        timeout,
    )


def child_of(receiver, parent, name):
    return receiver.wait_for(
        lambda span: span["name"] == name and span["parent_span_id"] == parent["span_id"]
        and span["trace_id"] == parent["trace_id"])


def check_call_trace(label, receiver, tool, child, era_version, session_expected):
    trace_id, span_id = client_span_of(tool)
    check(f"{label}: the SDK sent {tool} in a span of its own", span_id is not None)
    span = server_span(receiver, tool, trace_id)
    check(f"{label}: the server's span of the call is in the client's trace", span is not None,
          json.dumps(receiver.spans())[:2000])
    if span is None:
        return
    attributes = span["attributes"]
    check(f"{label}: its parent is the client's span", span["parent_span_id"] == span_id, str(span))
    check(f"{label}: kind SERVER", span["kind"] == "SERVER", span["kind"])
    check(f"{label}: method, tool and operation named", attributes.get("mcp.method.name") == "tools/call"
          and attributes.get("gen_ai.tool.name") == tool
          and attributes.get("gen_ai.operation.name") == "execute_tool", str(attributes))
    check(f"{label}: protocol version {era_version}", attributes.get("mcp.protocol.version") == era_version, str(attributes))
    check(f"{label}: a session only in the handshake era, as a digest (the id is a credential)",
          ("mcp.session.id" in attributes) == session_expected
          and (not session_expected or re.fullmatch("[0-9a-f]{32}", attributes["mcp.session.id"])), str(attributes))
    check(f"{label}: transport tcp, protocol http, the client's address",
          attributes.get("network.transport") == "tcp" and attributes.get("network.protocol.name") == "http"
          and attributes.get("client.address") == "127.0.0.1" and isinstance(attributes.get("client.port"), int),
          str(attributes))
    sent = sent_span(tool)
    check(f"{label}: the request's id, the one the client sent",
          sent is not None and attributes.get("jsonrpc.request.id") == sent.attributes.get("jsonrpc.request.id"),
          f"{attributes} {sent and dict(sent.attributes)}")
    check(f"{label}: not an error", span["status"] != "ERROR" and "error.type" not in attributes, str(span))
    check(f"{label}: no arguments recorded unless asked", "gen_ai.tool.call.arguments" not in attributes, str(span))
    check(f"{label}: no source paths, threads or audit events exported",
          not any(key.startswith(("code.", "thread.")) for key in attributes) and "tool call" not in span["events"],
          str(span))
    inner = child_of(receiver, span, child)
    check(f"{label}: the tool's own span '{child}' is the child of the call's", inner is not None,
          json.dumps([s for s in receiver.spans() if s["trace_id"] == span["trace_id"]])[:2000])


async def handshake_era(url, receiver):
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            # The session stays open: the span of its initialize must end all the same (the
            # watch it started is no part of it).
            initialize_trace = client_span_of_method("initialize")
            span = receiver.wait_for(lambda span: span["name"] == "initialize" and span["trace_id"] == initialize_trace)
            check("ClientSession: initialize's span ends with its answer, not with the session", span is not None,
                  str([s["name"] for s in receiver.spans()]))
            result = await session.call_tool("lookup", {"word": "beta"})
            check("ClientSession: lookup answered", not result.is_error, str(result))
            check_call_trace("ClientSession", receiver, "lookup", "index lookup", init.protocol_version, True)
            result = await session.call_tool("broken", {})
            check("ClientSession: broken is a tool error", result.is_error, str(result))
            trace_id, _ = client_span_of("broken")
            span = server_span(receiver, "broken", trace_id)
            check("ClientSession: a tool error is recorded as error.type tool_error, status ERROR",
                  span is not None and span["attributes"].get("error.type") == "tool_error"
                  and span["status"] == "ERROR", str(span))
            check("ClientSession: the error's message is not recorded",
                  span is not None and "backing service" not in json.dumps(span), str(span))
            result = await session.call_tool("panicky", {})
            check("ClientSession: a panicking tool is a tool error", result.is_error, str(result))
            trace_id, _ = client_span_of("panicky")
            span = server_span(receiver, "panicky", trace_id)
            check("ClientSession: a panic is recorded as an error, its message nowhere in what was exported",
                  span is not None and span["attributes"].get("error.type") == "tool_error"
                  and "secret-marker" not in json.dumps(receiver.spans()), str(span))


async def over_stdio(receiver):
    """Over stdio, the export is turned on by OTEL_EXPORTER_OTLP_ENDPOINT alone."""
    params = StdioServerParameters(command=SERVER, args=["serve"],
                                   env={**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("lookup", {"word": "gamma"})
            check("stdio: lookup answered", not result.is_error, str(result))
    trace_id, span_id = client_span_of("lookup")
    span = server_span(receiver, "lookup", trace_id)
    check("stdio: the server's span is the child of the client's (export named by the variable)",
          span is not None and span["parent_span_id"] == span_id, json.dumps(receiver.spans())[-2000:])
    if span is not None:
        attributes = span["attributes"]
        check("stdio: transport pipe, no network protocol nor client address",
              attributes.get("network.transport") == "pipe" and "network.protocol.name" not in attributes
              and "client.address" not in attributes, str(attributes))
        check("stdio: a session is no attribute where the transport has none",
              "mcp.session.id" not in attributes, str(attributes))


async def per_request_era(url, receiver):
    async with Client(url) as client:
        check("Client: negotiated 2026-07-28", client.protocol_version == "2026-07-28", client.protocol_version)
        result = await client.call_tool("checksum", {"text": "abc"})
        check("Client: checksum answered", not result.is_error, str(result))
        check_call_trace("Client", receiver, "checksum", "byte sum", "2026-07-28", False)


MCP_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]


def check_metrics(receiver):
    """The durations of the MCP conventions, by method and tool, in the conventions' buckets."""
    point = receiver.wait_for_point(
        lambda point: point["name"] == "mcp.server.operation.duration"
        and point["attributes"].get("mcp.method.name") == "tools/call"
        and point["attributes"].get("gen_ai.tool.name") == "lookup"
        and point["attributes"].get("mcp.protocol.version") == "2025-11-25")
    check("metrics: mcp.server.operation.duration of tools/call lookup, in seconds, in the conventions' buckets",
          point is not None and point["count"] >= 1 and point["unit"] == "s" and point["bounds"] == MCP_BUCKETS
          and point["sum"] > 0, str(point))
    point = receiver.wait_for_point(
        lambda point: point["name"] == "mcp.server.operation.duration"
        and point["attributes"].get("gen_ai.tool.name") == "broken")
    check("metrics: a tool's error is kept apart by its error type",
          point is not None and point["attributes"].get("error.type") == "tool_error", str(point))
    point = receiver.wait_for_point(
        lambda point: point["name"] == "mcp.server.operation.duration"
        and point["attributes"].get("gen_ai.tool.name") == "_OTHER")
    check("metrics: a tool the server does not have is counted as _OTHER, never by the name a client made up",
          point is not None and not any(p["attributes"].get("gen_ai.tool.name") == "nowhere" for p in receiver.points()),
          str(point))
    check("metrics: no attribute of many values (ids, sessions, addresses) on a duration",
          not any(key in point["attributes"] for key in ("jsonrpc.request.id", "mcp.session.id", "client.port"))
          if point else False, str(point))


def post(url, body, headers=None):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": body["method"],
        "Mcp-Name": body["params"]["name"],
        **(headers or {}),
    })
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.read().decode()
    except urllib.error.HTTPError as error:  # an error response has a status of its own
        return error.read().decode()


def call(word, meta_extra=None, request_id=1):
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}, **(meta_extra or {})}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "lookup", "arguments": {"word": word}, "_meta": meta}}


def by_word(receiver, word, timeout=30):
    """The server's span of the lookup of `word` (each check looks up its own word)."""
    def found(span):
        return span["name"] == "index lookup" and str(span["attributes"].get("word.length")) == str(len(word))
    inner = receiver.wait_for(found, timeout)
    if inner is None:
        return None
    return receiver.wait_for(lambda span: span["span_id"] == inner["parent_span_id"], timeout)


def context_by_hand(url, receiver):
    traceparent = f"00-{PARENT_TRACE}-{PARENT_SPAN}-01"
    header_parent = f"00-{PARENT_TRACE}-{HEADER_SPAN}-01"

    answer = post(url, call("x" * 11), {"traceparent": header_parent})
    check("header: answered", '"isError"' not in answer, answer)
    span = by_word(receiver, "x" * 11)
    check("header: a traceparent header alone is the parent",
          span is not None and span["trace_id"] == PARENT_TRACE and span["parent_span_id"] == HEADER_SPAN, str(span))

    answer = post(url, call("x" * 12, {"traceparent": traceparent}), {"traceparent": header_parent})
    check("both: answered", '"isError"' not in answer, answer)
    span = by_word(receiver, "x" * 12)
    check("both: _meta's traceparent is the parent",
          span is not None and span["parent_span_id"] == PARENT_SPAN, str(span))
    check("both: the header's span is a link",
          span is not None and {"trace_id": PARENT_TRACE, "span_id": HEADER_SPAN} in span["links"], str(span))

    answer = post(url, call("x" * 13, {"traceparent": "00-not-a-trace-01", "tracestate": 7}))
    check("malformed: answered all the same", '"result"' in answer and '"isError"' not in answer, answer)
    span = by_word(receiver, "x" * 13)
    check("malformed: ignored, the request starts a trace of its own",
          span is not None and span["parent_span_id"] is None and span["trace_id"] != PARENT_TRACE, str(span))

    answer = post(url, {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "nowhere", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}, "traceparent": traceparent}}})
    span = receiver.wait_for(lambda span: span["name"] == "tools/call nowhere")
    check("unknown tool: recorded with its JSON-RPC code as the error type", span is not None
          and span["attributes"].get("error.type") == "-32602"
          and span["attributes"].get("rpc.response.status_code") == "-32602" and span["status"] == "ERROR",
          f"{span} {answer}")


def rest_calls(url, receiver):
    """A REST call is an execute_tool span of the server's, its parent from the headers."""
    base = url.removesuffix("/mcp")
    span_id = "a1b2c3d4e5f60718"
    request = urllib.request.Request(f"{base}/api/tools/lookup/call", data=json.dumps({"word": "x" * 31}).encode(),
                                     method="POST", headers={"Content-Type": "application/json",
                                                             "traceparent": f"00-{PARENT_TRACE}-{span_id}-01"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        answer.read()
    span = by_word(receiver, "x" * 31)
    check("REST: the call is an execute_tool span, kind SERVER, its parent from the headers",
          span is not None and span["name"] == "execute_tool lookup" and span["kind"] == "SERVER"
          and span["parent_span_id"] == span_id and span["trace_id"] == PARENT_TRACE
          and span["attributes"].get("http.route") == "/api/tools/{name}/call"
          and span["attributes"].get("gen_ai.tool.name") == "lookup", str(span))
    request = urllib.request.Request(f"{base}/api/tools/execute", method="POST",
                                     data=json.dumps({"toolName": "broken", "parameters": {}}).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(request, timeout=30).read()
    except urllib.error.HTTPError as error:
        error.read()
    span = receiver.wait_for(lambda span: span["name"] == "execute_tool broken")
    check("REST: a tool's error is recorded as tool_error",
          span is not None and span["attributes"].get("error.type") == "tool_error" and span["status"] == "ERROR"
          and span["attributes"].get("http.route") == "/api/tools/execute", str(span))


def collector_down():
    """A collector that hangs, then one that is gone: calls never wait for the export. The
    export may wait ten minutes for the collector here, so a call held up by it would hang
    until its request timed out (30 s)."""
    receiver = Receiver()
    os.environ["OTEL_EXPORTER_OTLP_TIMEOUT"] = "600000"
    try:
        server, port = serve_http([SERVER, "serve", "--otel-endpoint", receiver.url])
    finally:
        os.environ["OTEL_EXPORTER_OTLP_TIMEOUT"] = EXPORT_TIMEOUT_MS
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        post(url, call("alpha"))
        check("collector up: the first span arrives", receiver.wait_for(lambda span: True) is not None)
        for state, make_so in (("stalled", receiver.stall), ("down", receiver.stop)):
            make_so()
            answered = 0
            for number in range(30):
                answer = post(url, call("alpha", request_id=100 + number))
                answered += '"structuredContent":0' in answer
            check(f"collector {state}: every call still answered", answered == 30, f"{answered} of 30")
    finally:
        server.kill()
        server.wait()
        receiver.stop()


def flushed_at_shutdown():
    """A stdio server whose input ends sends the spans still queued as it stops."""
    receiver = Receiver()
    # Spans would wait a minute for their batch: only the shutdown's flush sends them.
    env = {**os.environ, "OTEL_BSP_SCHEDULE_DELAY": "60000", "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}
    server = subprocess.Popen([SERVER, "serve", "--otel-arguments", "12"], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        server.stdin.write(json.dumps(call("x" * 21)) + "\n")
        server.stdin.flush()
        answer = server.stdout.readline()
        check("shutdown: the call over stdio answered", '"result"' in answer, answer)
        server.stdin.close()
        server.wait(timeout=30)
        check("shutdown: the server ended when its input did", server.returncode == 0, str(server.returncode))
        span = by_word(receiver, "x" * 21, timeout=5)
        check("shutdown: the spans still queued are sent when the server stops", span is not None,
              json.dumps(receiver.spans())[-2000:])
        check("--otel-arguments 12: the arguments recorded, cut to 12 bytes",
              span is not None and span["attributes"].get("gen_ai.tool.call.arguments") == '{"word":"xxx', str(span))
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        receiver.stop()


def flushed_at_drain():
    """A server told to stop sends what it traced as its drain starts, not only at its end."""
    receiver = Receiver()
    # Batches wait five minutes, the drain two: only the drain's flush sends the span in time.
    os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "300000"
    server, port = serve_http([SERVER, "serve", "--otel-endpoint", receiver.url, "--drain-delay", "120s"])
    try:
        post(f"http://127.0.0.1:{port}/mcp", call("x" * 22))
        # Answered after the first ended: the first's span is closed and queued by now.
        post(f"http://127.0.0.1:{port}/mcp", call("x" * 23))
        server.send_signal(signal.SIGTERM)
        span = by_word(receiver, "x" * 22, timeout=100)
        check("drain: the spans queued are sent while the server drains",
              span is not None and server.poll() is None, f"{span} {server.poll()}")
    finally:
        server.kill()
        server.wait()
        receiver.stop()


def over_grpc():
    """OTLP over gRPC: the span of a call reaches a gRPC receiver, in the client's trace."""
    receiver = Receiver(grpc=True)
    os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "100"
    server, port = serve_http([SERVER, "serve", "--otel-protocol", "grpc",
                               "--otel-endpoint", f"http://127.0.0.1:{receiver.grpc_port}"])
    try:
        answer = post(f"http://127.0.0.1:{port}/mcp", call("x" * 41, {"traceparent": f"00-{PARENT_TRACE}-{PARENT_SPAN}-01"}))
        check("gRPC: answered", '"result"' in answer, answer)
        span = by_word(receiver, "x" * 41)
        check("gRPC: the call's span came over gRPC, the child of the client's",
              span is not None and span["trace_id"] == PARENT_TRACE and span["parent_span_id"] == PARENT_SPAN,
              f"{span} {len(receiver.spans())} spans")
    finally:
        server.kill()
        server.wait()
        receiver.stop()


class ScriptedModel:
    """An OpenAI-compatible model on 127.0.0.1: its first turn calls `up_lookup`, its
    second answers in words."""

    def __init__(self):
        self.requests = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                model.requests.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                if len(model.requests) == 1:
                    message = {"role": "assistant", "content": None, "tool_calls": [{
                        "id": "call-1", "type": "function",
                        "function": {"name": "up_lookup", "arguments": '{"word": "gamma"}'}}]}
                    finish, usage = "tool_calls", {"prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 100}
                else:
                    message = {"role": "assistant", "content": "gamma is third."}
                    finish, usage = "stop", {"prompt_tokens": 120, "completion_tokens": 5, "total_tokens": 125}
                body = json.dumps({"id": "x", "object": "chat.completion", "created": 1, "model": "scripted",
                                   "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                                   "usage": usage}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self):
        self._server.shutdown()
        self._server.server_close()


def agent_trace():
    receiver = Receiver()
    model = ScriptedModel()
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    env.update({"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100",
                "OTEL_METRIC_EXPORT_INTERVAL": "300"})
    try:
        # The agent waits for its input to end before it stops the mounted server: the
        # spans of both processes are read first.
        agent = subprocess.Popen([AGENT, model.url, f"{SERVER} serve", "Where is gamma?"], env=env,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            status = agent.stdout.readline().strip()
            check("agent: the loop ran to done", status == "done", status)
            run = receiver.wait_for(lambda span: span["name"] == "invoke_agent")
            tool_span = run and receiver.wait_for(
                lambda span: span["name"] == "index lookup" and span["trace_id"] == run["trace_id"])
        finally:
            agent.stdin.close()
            try:
                agent.wait(timeout=60)
            except subprocess.TimeoutExpired:
                agent.kill()
                agent.wait()
        check("agent: it ended cleanly", agent.returncode == 0, agent.stderr.read()[-2000:])
        check("agent: one invoke_agent span, the root of its trace",
              run is not None and run["parent_span_id"] is None and run["service"] == "traced-agent", str(run))
        if run is None:
            return
        check("agent: the tool's own span, in the other process, is in the agent's trace",
              tool_span is not None and tool_span["service"] == "traced-tools", str(tool_span))
        spans = {span["span_id"]: span for span in receiver.spans() if span["trace_id"] == run["trace_id"]}
        chain = []
        at = tool_span
        while at is not None:
            chain.append((at["name"], at["kind"], at["service"]))
            at = spans.get(at["parent_span_id"])
        check("agent: invoke_agent > execute_tool > tools/call (client) > tools/call (server) > the tool's span",
              chain == [("index lookup", "INTERNAL", "traced-tools"),
                        ("tools/call lookup", "SERVER", "traced-tools"),
                        ("tools/call lookup", "CLIENT", "traced-agent"),
                        ("execute_tool up_lookup", "INTERNAL", "traced-agent"),
                        ("invoke_agent", "INTERNAL", "traced-agent")], str(chain))
        attributes = run["attributes"]
        check("agent: the run's status, turns, calls and tokens",
              attributes.get("tool_runtime.agent.status") == "done" and str(attributes.get("tool_runtime.agent.turns")) == "2"
              and str(attributes.get("tool_runtime.agent.tool_calls")) == "1"
              and str(attributes.get("gen_ai.usage.input_tokens")) == "210"
              and str(attributes.get("gen_ai.usage.output_tokens")) == "15"
              and attributes.get("gen_ai.provider.name") == "openai", str(attributes))
        chats = [span for span in spans.values() if span["name"] == "chat"]
        check("agent: a chat span per turn, under the run, with the provider's token counts",
              len(chats) == 2 and all(span["parent_span_id"] == run["span_id"] and span["kind"] == "CLIENT" for span in chats)
              and sorted(str(span["attributes"].get("gen_ai.usage.output_tokens")) for span in chats) == ["10", "5"],
              str(chats))
        point = receiver.wait_for_point(lambda point: point["name"] == "gen_ai.client.operation.duration"
                                        and point["service"] == "traced-agent" and point["count"] == 2)
        check("agent metrics: gen_ai.client.operation.duration counts both turns, by provider",
              point is not None and point["attributes"].get("gen_ai.provider.name") == "openai"
              and point["attributes"].get("gen_ai.operation.name") == "chat", str(point))
        tokens = {kind: receiver.wait_for_point(lambda point, kind=kind: point["name"] == "gen_ai.client.token.usage"
                                                and point["attributes"].get("gen_ai.token.type") == kind
                                                and point["count"] == 2)
                  for kind in ("input", "output")}
        check("agent metrics: gen_ai.client.token.usage, input and output, as the provider counted them",
              tokens["input"] is not None and tokens["input"]["sum"] == 210
              and tokens["output"] is not None and tokens["output"]["sum"] == 15, str(tokens))
        sent = receiver.wait_for_point(lambda point: point["name"] == "mcp.client.operation.duration"
                                       and point["attributes"].get("gen_ai.tool.name") == "lookup")
        check("agent metrics: mcp.client.operation.duration of the call sent to the mounted server",
              sent is not None and sent["count"] == 1 and sent["attributes"].get("mcp.method.name") == "tools/call",
              str(sent))
        if PICTURE:
            with open(PICTURE, "w") as picture:
                picture.write(svg(list(spans.values()), "One trace: an agent's run, down to a tool's own span in another process"))
        execute = next((span for span in spans.values() if span["name"] == "execute_tool up_lookup"), None)
        check("agent: the tool call's id and name on execute_tool",
              execute is not None and execute["attributes"].get("gen_ai.tool.call.id") == "call-1"
              and execute["attributes"].get("gen_ai.tool.name") == "up_lookup", str(execute))
    finally:
        model.stop()
        receiver.stop()


async def main():
    receiver = Receiver()
    os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "100"
    os.environ["OTEL_EXPORTER_OTLP_TIMEOUT"] = EXPORT_TIMEOUT_MS
    os.environ["OTEL_SERVICE_NAME"] = "traced-tools-under-test"
    os.environ["OTEL_METRIC_EXPORT_INTERVAL"] = "300"
    # The audit trail on (its events name callers and arguments): none of it may be exported.
    os.environ["RUST_LOG"] = "info,tool_runtime::audit=info"
    server, port = serve_http([SERVER, "serve", "--otel-endpoint", receiver.url])
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for run in (handshake_era, per_request_era):
            try:
                await run(url, receiver)
            except Exception as error:  # a crash is a failure, not the end of the run
                check(run.__name__, False, repr(error))
        try:
            await over_stdio(receiver)
        except Exception as error:
            check("over_stdio", False, repr(error))
        spans = receiver.spans()
        check("the service is named by OTEL_SERVICE_NAME",
              bool(spans) and all(span["service"] == "traced-tools-under-test" for span in spans),
              str({span["service"] for span in spans}))
        for run in (context_by_hand, rest_calls):
            try:
                run(url, receiver)
            except Exception as error:
                check(run.__name__, False, repr(error))
        check_metrics(receiver)
    finally:
        server.kill()
        server.wait()
    for run in (collector_down, flushed_at_shutdown, flushed_at_drain, over_grpc, agent_trace):
        try:
            run()
        except Exception as error:
            check(run.__name__, False, repr(error))
    finish("traces")


anyio.run(main)
