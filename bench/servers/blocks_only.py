"""A minimal MCP server over stdio (protocol 2025-11-25, Python's standard library only).

Its one tool, `add`, declares no output schema and answers a text block alone, as most
servers' tools do. Mounted behind `bench-ours`, it measures what the front server spends on
such answers, which carry no structured content:

    driver stdio sequential 6000 up_add -- \
        valgrind --tool=callgrind bench-ours serve --mount "up=python3 bench/servers/blocks_only.py"

(the mounted server's own cost is not counted: valgrind follows the front server alone).
"""

import json
import sys


def answer(message):
    method = message.get("method")
    if method == "initialize":
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "blocks-only", "version": "1"},
        }
    if method == "tools/list":
        schema = {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        }
        return {"tools": [{"name": "add", "inputSchema": schema}]}
    if method == "tools/call":
        arguments = message["params"]["arguments"]
        return {"content": [{"type": "text", "text": str(arguments["a"] + arguments["b"])}]}
    if method == "ping":
        return {}
    return None


def refuse(code, text):
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": text}}
    sys.stdout.write(json.dumps(error) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    if not line.strip():
        continue
    try:
        message = json.loads(line)
    except ValueError:
        refuse(-32700, "parse error")
        continue
    if not isinstance(message, dict):
        refuse(-32600, "invalid request")
        continue
    if "id" not in message:
        continue
    try:
        result = answer(message)
    except (KeyError, TypeError) as error:
        reply = {"code": -32602, "message": f"invalid params: {error}"}
        out = {"jsonrpc": "2.0", "id": message["id"], "error": reply}
    else:
        if result is None:
            reply = {"code": -32601, "message": f"no method {message.get('method')}"}
            out = {"jsonrpc": "2.0", "id": message["id"], "error": reply}
        else:
            out = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
