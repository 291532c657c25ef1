"""CPU per call of a server with its traces exported, against the same server exporting
nothing, in one run: a release build of `traced-tools` serves over HTTP, a client sends
`tools/call lookup` N times on one keep-alive connection, and the server's CPU time (user
and system, every thread: the export's too) is read from /proc before and after. Rounds
alternate between the two, and the medians are reported.

Usage: python3 otel_cpu.py TRACED_TOOLS_RELEASE_BINARY [CALLS]
(needs the test venv's Python for the receiver: opentelemetry-proto)
"""

import http.client
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "clients"))
from checks import serve_http  # noqa: E402
from otlp_receiver import Receiver  # noqa: E402

BINARY = sys.argv[1]
CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def calls(port, count):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "lookup", "arguments": {"word": "beta"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "lookup"}
    connection = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(count):
        connection.request("POST", "/mcp", body, headers)
        answer = connection.getresponse().read()
        assert b'"structuredContent":1' in answer, answer
    connection.close()


def measure(exporting, receiver):
    env_args = ["--otel-endpoint", receiver.url] if exporting else []
    server, port = serve_http([BINARY, "serve", *env_args])
    try:
        calls(port, 200)  # warm up
        before = cpu_seconds(server.pid)
        calls(port, CALLS)
        # Let the last batches leave, so that their CPU counts too.
        time.sleep(1.5)
        return (cpu_seconds(server.pid) - before) / CALLS
    finally:
        server.kill()
        server.wait()


def main():
    receiver = Receiver()
    os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "200"
    rounds = {False: [], True: []}
    for _ in range(3):
        for exporting in (False, True):
            rounds[exporting].append(measure(exporting, receiver))
    off, on = statistics.median(rounds[False]), statistics.median(rounds[True])
    print(f"server CPU per tools/call over HTTP, {CALLS} calls a round, median of 3 rounds")
    print(f"  export off (feature built in)  {off * 1e6:8.1f} µs  1.00x")
    print(f"  spans exported over OTLP/HTTP  {on * 1e6:8.1f} µs  {on / off:.2f}x")
    print(f"  spans received: {len(receiver.spans())}")
    receiver.stop()


main()
