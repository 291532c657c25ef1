"""Servers nobody here wrote, reached by our MCP client: the official everything server
(npm), a FastMCP server (PyPI) and rmcp's example server (crates.io), each over stdio and
over Streamable HTTP.

- Called directly, with our command line (`list --server`, `call --server`).
- Mounted behind our server (`serve --mount`), and called there by the official Python SDK
  (its 2026-07-28 Client and its handshake-era ClientSession) and the TypeScript SDK:
  results, progress, elicitation, sampling, log messages, prompts and resources passed
  through the mount, and a tool that runs only as a task on its server.
- An upstream killed and restarted while calls keep coming: its tools answer an error
  that says to retry, the others go on, and once it is back its tools answer again.

Usage: upstreams.py OURS RMCP_EXAMPLE EVERYTHING_JS
(OURS: a tool server built with the runtime's `client` feature; RMCP_EXAMPLE: the bench's
rmcp example server; EVERYTHING_JS: server-everything's dist/index.js.) Node comes from
PATH, the Python SDK and FastMCP from the interpreter running this script.
Prints one line per check and a closing "N passed, N failed" line; exits 1 on a failure.
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import anyio
import mcp.types as types
from checks import PATIENCE, check, finish, free_port, wait_for_port
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client

OURS, RMCP, EVERYTHING = sys.argv[1], sys.argv[2], sys.argv[3]
HERE = Path(__file__).resolve().parent
LOOPBACK = str(HERE / "bind-loopback.cjs")
FASTMCP = [sys.executable, str(HERE / "fastmcp_server.py")]
# Our server runs in an empty directory of its own (its own tools work there).
WORKSPACE = Path(os.environ.get("TMPDIR", "/tmp")) / f"upstreams-{os.getpid()}"
WORKSPACE.mkdir(exist_ok=True)
STARTED = []  # every child process, stopped by its pid at the end
# The handshake-era session sets a log level, which the SDK warns is gone at 2026-07-28.
warnings.filterwarnings("ignore", message="The logging capability is deprecated")


def start(command, env=None, on_line=None):
    """Starts `command`, stopped by its pid at the end. What it writes on stderr is read as
    it comes (a pipe nobody reads stops a server that logs much once it is full) and kept
    in `process.log_lines`; each line is handed to `on_line` too, when given."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
        text=True,
    )
    process.log_lines = []

    def read():
        for line in process.stderr:
            process.log_lines.append(line)
            if on_line is not None:
                on_line(line)

    threading.Thread(target=read, daemon=True).start()
    STARTED.append(process)
    return process


def said_of_elicitation():
    """What the servers started here wrote on stderr about a question they asked (the
    everything server says why a task's question failed, where its answer says only that
    it did)."""
    return [line.strip() for process in STARTED for line in process.log_lines if "licitation" in line][-6:]


def stop(process):
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait()


def quoted(command):
    """A command line as our `--mount` and `--server` read it (split as a shell splits)."""
    return " ".join("'" + word.replace("'", "'\\''") + "'" for word in command)


class Upstream:
    """One server nobody here wrote: how to start it over stdio, and over HTTP."""

    def __init__(self, label, stdio, http, call, expected, prefix):
        self.label, self.stdio, self.http, self.call, self.expected = label, stdio, http, call, expected
        self.prefix = prefix

    def serve_http(self, port=None):
        """Starts it over HTTP on 127.0.0.1; its process and its endpoint's URL."""
        port = port or free_port()
        process = start(*self.http(port))
        wait_for_port(port, process)
        return process, f"http://127.0.0.1:{port}/mcp"


UPSTREAMS = [
    Upstream(
        "server-everything",
        [os.environ.get("NODE", "node"), EVERYTHING, "stdio"],
        lambda port: (["node", "--require", LOOPBACK, EVERYTHING, "streamableHttp"], {"PORT": str(port)}),
        ("get-sum", {"a": 2, "b": 3}),
        "The sum of 2 and 3 is 5.",
        "ev",
    ),
    Upstream(
        "FastMCP",
        FASTMCP,
        lambda port: (FASTMCP + ["--http", str(port)], None),
        ("multiply", {"a": 6, "b": 7}),
        "42",
        "fm",
    ),
    Upstream(
        "rmcp",
        [RMCP],
        lambda port: ([RMCP, "--http", f"127.0.0.1:{port}"], None),
        ("add", {"a": 2, "b": 40}),
        "42",
        "rm",
    ),
]


def ours(*args, stdin=""):
    return subprocess.run(
        [OURS, "--root", str(WORKSPACE), *args], input=stdin, capture_output=True, text=True, timeout=120
    )


def direct(upstream, over, target):
    """Our command line against the server: its catalog, and one call."""
    label = f"our CLI -> {upstream.label}/{over}"
    listed = ours("list", "--server", target, "--format", "mcp")
    names = []
    if listed.returncode == 0:
        names = [tool["name"] for tool in json.loads(listed.stdout)]
    check(f"{label}: list --server", upstream.call[0] in names, listed.stderr[-400:] or str(names))
    name, arguments = upstream.call
    called = ours("call", "--server", target, name, json.dumps(arguments))
    check(f"{label}: call --server", called.returncode == 0 and upstream.expected in called.stdout,
          (called.stdout + called.stderr)[-400:])
    if upstream.label == "server-everything":
        # A tool that runs only as a task (taskSupport "required", 2025-11-25): called as
        # one, its result waited for.
        called = ours("call", "--server", target, "simulate-research-query", json.dumps({"topic": "tides"}))
        check(f"{label}: a tool that requires a task", called.returncode == 0 and
              "Research Report: tides" in called.stdout, (called.stdout + called.stderr)[-400:])


def serve_ours(mounts):
    """Our server over HTTP with `mounts`; its process and URL, once it says where it is."""
    args = [OURS, "--root", str(WORKSPACE), "serve", "--http", "127.0.0.1:0"]
    for mount in mounts:
        args += ["--mount", mount]
    address = {}

    def told(line):
        found = re.search(r"serving MCP over HTTP at (http://[^/\s]+)", line)
        if found and "url" not in address:
            address["url"] = found.group(1) + "/mcp"

    process = start(args, {"RUST_LOG": "info"}, on_line=told)
    deadline = time.monotonic() + PATIENCE
    while "url" not in address:
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("our server did not say where it serves")
        time.sleep(0.05)
    return process, address["url"]


def text_of(result):
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def fill(schema):
    """An answer to a form: each property its default, else a value of its type."""
    answer = {}
    for name, prop in (schema or {}).get("properties", {}).items():
        if "default" in prop:
            answer[name] = prop["default"]
        elif prop.get("enum"):
            answer[name] = prop["enum"][0]
        elif prop.get("oneOf") and "const" in prop["oneOf"][0]:
            answer[name] = prop["oneOf"][0]["const"]
        else:
            answer[name] = {"boolean": True, "integer": 7, "number": 7.5}.get(prop.get("type"), "teal")
    return answer


asked = []


answered = []


async def on_elicit(context, params):
    asked.append(("elicit", params.message))
    answered.append(fill(params.requested_schema))
    return types.ElicitResult(action="accept", content=answered[-1])


async def on_sample(context, params):
    asked.append(("sample", None))
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="Paris"), model="test-model",
        stop_reason="endTurn")


logged = []


async def on_log(params):
    logged.append(params.data)


CALLBACKS = {"elicitation_callback": on_elicit, "sampling_callback": on_sample, "logging_callback": on_log}


async def until_listed(client, name):
    with anyio.fail_after(PATIENCE):
        while True:
            tools = await client.list_tools()
            names = {tool.name for tool in tools.tools}
            if name in names:
                return names
            await anyio.sleep(0.05)


async def through_mounts(label, client):
    """What the Python SDK gets from the mounted servers through ours."""
    names = await until_listed(client, "rm_add")
    await until_listed(client, "ev_get-sum")
    names = await until_listed(client, "fm_multiply")
    check(f"{label}: every mount's tools are listed under its prefix, beside ours",
          {"ev_get-sum", "fm_multiply", "rm_add", "list_files"} <= names, str(sorted(names)))
    for upstream in UPSTREAMS:
        name, arguments = upstream.call
        result = await client.call_tool(f"{upstream.prefix}_{name}", arguments)
        check(f"{label}: a call of {upstream.label}'s {name}", not result.is_error and upstream.expected in text_of(result),
              str(result))

    result = await client.call_tool("ev_get-annotated-message", {"messageType": "success", "includeImage": True})
    blocks = [block.model_dump(exclude_none=True) for block in result.content]
    check(f"{label}: content blocks come through as sent, annotations and all",
          not result.is_error and len(blocks) == 2
          and blocks[0].get("annotations") == {"priority": 0.7, "audience": ["user"]}
          and blocks[1].get("type") == "image" and "priority" in blocks[1].get("annotations", {}), str(blocks))

    result = await client.call_tool("fm_reserve", {"sku": "A-1"})
    blocks = [block.model_dump(exclude_none=True) for block in result.content]
    check(f"{label}: a failed tool's answer comes through as sent: its blocks, annotations and structured content",
          result.is_error and len(blocks) == 2 and blocks[0].get("text") == "A-1 is out of stock"
          and blocks[0].get("annotations") == {"audience": ["user"], "priority": 0.9}
          and blocks[1].get("type") == "image"
          and result.structured_content == {"sku": "A-1", "available": 0, "instead": ["B-2"]},
          f"{result.is_error} {blocks} {result.structured_content}")

    result = await client.call_tool("rm_add", {"a": "two", "b": 1})
    check(f"{label}: arguments that do not fit are refused here, naming the tool and parameter",
          result.is_error and "rm_add" in text_of(result) and "'a'" in text_of(result), text_of(result))

    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total))

    result = await client.call_tool("fm_count_to", {"n": 3}, progress_callback=on_progress)
    check(f"{label}: FastMCP's progress comes through", text_of(result) == "counted to 3" and
          [p for p, _ in seen] == [1, 2, 3], f"{text_of(result)} {seen}")
    seen.clear()
    result = await client.call_tool("ev_trigger-long-running-operation", {"duration": 0.4, "steps": 2},
                                    progress_callback=on_progress)
    check(f"{label}: server-everything's progress comes through", not result.is_error and len(seen) == 2, f"{result} {seen}")

    asked.clear()
    result = await client.call_tool("fm_favourite_colour", {})
    check(f"{label}: FastMCP's question reaches the user, and the answer FastMCP",
          text_of(result) == "you like teal" and ("elicit", "Your favourite colour?") in asked, f"{text_of(result)} {asked}")
    asked.clear()
    result = await client.call_tool("ev_trigger-sampling-request", {"prompt": "Capital of France?"})
    check(f"{label}: server-everything's sampling request reaches our client's model",
          not result.is_error and "Paris" in text_of(result) and ("sample", None) in asked, f"{result} {asked}")
    asked.clear()
    result = await client.call_tool("ev_trigger-elicitation-request", {})
    check(f"{label}: server-everything's form reaches the user", not result.is_error and asked and asked[0][0] == "elicit",
          f"{result} {asked}")

    result = await client.call_tool("ev_simulate-research-query", {"topic": "tides"})
    check(f"{label}: server-everything's tool that requires a task runs as one there",
          not result.is_error and "Research Report: tides" in text_of(result), str(result)[-400:])
    asked.clear()
    answered.clear()
    result = await client.call_tool("ev_simulate-research-query", {"topic": "tides", "ambiguous": True})
    # The form's answer (one of the interpretations it offers) is the task's clarification.
    chosen = answered[0].get("interpretation") if answered else None
    check(f"{label}: the question a task asks on its server reaches the user, and the answer the task",
          not result.is_error and asked and asked[0][0] == "elicit" and chosen
          and f"Research Report: tides ({chosen})" in text_of(result),
          f"{asked} {answered} {str(result)[-400:]} {said_of_elicitation()}")

    prompts = await client.list_prompts()
    check(f"{label}: mounted prompts are listed under the prefix",
          {"fm_limerick", "ev_simple-prompt"} <= {p.name for p in prompts.prompts}, str([p.name for p in prompts.prompts]))
    got = await client.get_prompt("fm_limerick", {"subject": "crabs"})
    check(f"{label}: a mounted prompt", "limerick about crabs" in got.messages[0].content.text, str(got))
    read = await client.read_resource("fastmcp://greeting")
    check(f"{label}: a mounted resource", read.contents[0].text == "hello from FastMCP", str(read))


async def client_2026(url):
    async with Client(url, **CALLBACKS) as client:
        check("Python SDK Client -> ours: 2026-07-28", client.protocol_version == "2026-07-28", client.protocol_version)
        await through_mounts("Python SDK Client (2026-07-28) through mounts", client)


async def session_2025(url):
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write, **CALLBACKS) as session:
            await session.initialize()
            await through_mounts("Python SDK ClientSession (2025-11-25) through mounts", session)
            logged.clear()
            await session.set_logging_level("info")
            await session.call_tool("fm_count_to", {"n": 2})
            with anyio.fail_after(PATIENCE):
                while not any("counted to 2" in json.dumps(data) for data in logged):
                    await anyio.sleep(0.02)
            check("Python SDK ClientSession through mounts: FastMCP's log message comes through", True)


def typescript(url):
    script = HERE / "typescript_mounted.mjs"
    run = subprocess.run(["node", str(script), url], capture_output=True, text=True, timeout=120)
    for line in run.stdout.splitlines():
        print(line)
    check("TypeScript SDK through mounts", run.returncode == 0, run.stderr[-600:])


async def calls_while_an_upstream_restarts():
    """Calls keep coming while the rmcp server behind a mount is killed and started again."""
    rmcp = UPSTREAMS[2]
    port = free_port()
    upstream, upstream_url = rmcp.serve_http(port)
    server, url = serve_ours([f"rm={upstream_url}"])
    answered, refused, errors = [], [], []
    stopping = anyio.Event()
    try:
        async with Client(url) as client:
            await until_listed(client, "rm_add")

            async def worker(number):
                n = 0
                while not stopping.is_set():
                    n += 1
                    try:
                        with anyio.fail_after(PATIENCE):
                            result = await client.call_tool("rm_add", {"a": number, "b": n})
                    except Exception as error:  # a hang or a protocol error is a failure
                        errors.append(repr(error))
                        continue
                    if result.is_error:
                        refused.append(text_of(result))
                    elif text_of(result) == str(number + n):
                        answered.append(number)
                    else:
                        errors.append(f"wrong sum: {text_of(result)}")

            async with anyio.create_task_group() as workers:
                for number in range(8):
                    workers.start_soon(worker, number)
                with anyio.fail_after(PATIENCE):
                    while len(answered) < 40:
                        await anyio.sleep(0.01)
                stop(upstream)
                with anyio.fail_after(PATIENCE):
                    while len(refused) < 8:
                        await anyio.sleep(0.01)
                local = await client.call_tool("list_files", {"path": "."})
                check("while an upstream is down, our own tools go on", not local.is_error, str(local))
                before = len(answered)
                upstream, _ = rmcp.serve_http(port)
                with anyio.fail_after(PATIENCE):
                    while len(answered) < before + 40:
                        await anyio.sleep(0.01)
                stopping.set()
    finally:
        stop(upstream)
        stop(server)
    check("under load, every call was answered (none hung, none lost)", not errors, str(errors[:3]))
    check("while the upstream was down, its tools said which mount, and to retry",
          refused and all("`rm`" in text and "retry" in text for text in refused), str(refused[:2]))
    check("once it was back, its tools answered again", len(answered) >= 80, f"{len(answered)} answered")


async def main():
    for upstream in UPSTREAMS:
        direct(upstream, "stdio", quoted(upstream.stdio))
        process, url = upstream.serve_http()
        try:
            direct(upstream, "http", url)
        finally:
            stop(process)

    for over in ("stdio", "http"):
        started, mounts = [], []
        for upstream in UPSTREAMS:
            if over == "stdio":
                mounts.append(f"{upstream.prefix}={quoted(upstream.stdio)}")
            else:
                process, url = upstream.serve_http()
                started.append(process)
                mounts.append(f"{upstream.prefix}={url}")
        server, url = serve_ours(mounts)
        print(f"-- mounts over {over}")
        try:
            for run in (client_2026, session_2025):
                try:
                    await run(url)
                except Exception as error:  # a crash is a failure, not the end of the run
                    check(f"{run.__name__} over {over}", False, repr(error))
            typescript(url)
        finally:
            stop(server)
            for process in started:
                stop(process)

    try:
        await calls_while_an_upstream_restarts()
    except Exception as error:
        check("calls while an upstream restarts", False, repr(error))


try:
    anyio.run(main)
finally:
    for process in STARTED:
        stop(process)
finish("servers nobody here wrote")
