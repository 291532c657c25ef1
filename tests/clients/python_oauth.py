"""Drives a tool server that checks OAuth access tokens with the official Python MCP SDK's
own OAuth client (client credentials), against a small authorization server run here.

The SDK does the whole dance by itself: the server's 401 challenge leads it to the
protected-resource metadata, that to the authorization server's metadata, and that to a
token for the scopes the challenge names. The authorization server grants only
`notes:read` at first, so a call of `write_notes` is refused with 403 insufficient_scope
and the SDK steps up to a token with both scopes, then calls again.

Usage: python_oauth.py TOOL_BINARY (the `ops-tools` test binary)
Prints one line per check and a closing "N passed, N failed" line; exits 1 on a failure.
"""

import base64
import json
import os
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
from checks import NotServing, check, finish, free_port, serve_http
import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from mcp import ClientSession
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

SERVER = sys.argv[1]
CLIENT_ID = "nightly-job"
CLIENT_SECRET = "s3cret"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class AuthorizationServer:
    """Metadata (RFC 8414) and a token endpoint for the client-credentials grant, signing
    with an Ed25519 key made here. It grants `notes:read` on the first request whatever is
    asked, and what is asked afterwards: consent given step by step."""

    def __init__(self):
        # Bound first, to a port the system picks: its URL is known once it listens.
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
        self.port = self.http.server_address[1]
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.key = Ed25519PrivateKey.generate()
        public = self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.jwks = {"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "as-1", "alg": "EdDSA", "x": b64url(public)}]}
        self.token_requests = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/.well-known/oauth-authorization-server":
                    self.answer(200, {
                        "issuer": server.issuer,
                        "authorization_endpoint": f"{server.issuer}/authorize",
                        "token_endpoint": f"{server.issuer}/token",
                        "grant_types_supported": ["client_credentials"],
                        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                        "response_types_supported": ["code"],
                        "code_challenge_methods_supported": ["S256"],
                    })
                else:
                    self.answer(404, {"error": "not_found"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                form = urllib.parse.parse_qs(self.rfile.read(length).decode())
                form = {key: values[0] for key, values in form.items()}
                expected = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
                if self.path != "/token" or self.headers.get("Authorization") != expected:
                    self.answer(401, {"error": "invalid_client"})
                    return
                server.token_requests.append(form)
                asked = form.get("scope", "")
                granted = "notes:read" if len(server.token_requests) == 1 else asked
                now = int(time.time())
                claims = {
                    "iss": server.issuer, "aud": form.get("resource"), "sub": CLIENT_ID,
                    "scope": granted, "iat": now, "exp": now + 600,
                }
                token = jwt.encode(claims, server.key, algorithm="EdDSA", headers={"kid": "as-1"})
                self.answer(200, {"access_token": token, "token_type": "Bearer", "expires_in": 600, "scope": granted})

        self.http.RequestHandlerClass = Handler
        threading.Thread(target=self.http.serve_forever, daemon=True).start()


class MemoryStorage:
    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


def structured(result):
    return result.structured_content or {}


async def exercise(url, authorization):
    provider = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=MemoryStorage(),
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        issuer=authorization.issuer,
    )
    async with create_mcp_http_client(auth=provider) as http_client:
        # Every 403 challenge the server sends, as the SDK's auth flow sees it.
        challenges = []

        async def record(response):
            if response.status_code == 403:
                challenges.append(response.headers.get("www-authenticate", ""))

        http_client.event_hooks["response"].append(record)
        async with streamable_http_client(url, http_client=http_client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                first = authorization.token_requests[0] if authorization.token_requests else {}
                check("oauth: the 401 led the SDK to a token for this server (resource)", first.get("resource") == url, str(first))
                check(
                    "oauth: the challenge's scopes were asked for",
                    set(first.get("scope", "").split()) == {"notes:read", "notes:write"},
                    str(first),
                )
                tools = sorted(tool.name for tool in (await session.list_tools()).tools)
                check("oauth: tools/list with the token", tools == ["echo", "hold", "motd", "read_notes", "wait", "whoami", "write_notes"], str(tools))
                who = structured(await session.call_tool("whoami", {})).get("result", {})
                check(
                    "oauth: the tool sees the token's subject and scopes",
                    who == {"subject": CLIENT_ID, "scopes": ["notes:read"]},
                    str(who),
                )
                read = structured(await session.call_tool("read_notes", {}))
                check("oauth: a call the token permits", read == {"result": "ship on friday"}, str(read))
                written = await session.call_tool("write_notes", {"line": "ship on monday"})
                check(
                    "oauth: 403 insufficient_scope, then the SDK steps up and the call goes through",
                    structured(written) == {"result": 14},
                    str(written),
                )
                check(
                    "oauth: the 403 challenge names insufficient_scope and every scope the tool requires",
                    len(challenges) == 1
                    and 'error="insufficient_scope"' in challenges[0]
                    and 'scope="notes:read notes:write"' in challenges[0],
                    str(challenges),
                )
                challenged = set(challenges[0].split('scope="', 1)[-1].split('"', 1)[0].split()) if challenges else set()
                asked = set(authorization.token_requests[-1].get("scope", "").split())
                # The 401 named the same scopes as the 403 (every scope some tool requires), so
                # this shows that the 403 led to a new token for exactly those scopes, not
                # which challenge the SDK read them from.
                check(
                    "oauth: after the 403 the SDK asked for a new token, for exactly the challenged scopes",
                    len(authorization.token_requests) == 2 and challenged and challenged == asked,
                    str(authorization.token_requests),
                )


def start_server(authorization, jwks_file):
    """The server under test and its endpoint's URL. Its OAuth resource names its port, so
    the port is chosen here; another process may take it first, and then another is."""
    for _ in range(5):
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        command = [SERVER, "serve", "--oauth-resource", url, "--oauth-issuer",
                   authorization.issuer, "--oauth-jwks-file", jwks_file]
        try:
            server, _ = serve_http(command, port)
            return server, url
        except NotServing:
            continue
    raise SystemExit("the server under test did not start on any of five ports")


async def main():
    authorization = AuthorizationServer()
    keys = tempfile.NamedTemporaryFile("w", suffix=".jwks.json", delete=False)
    json.dump(authorization.jwks, keys)
    keys.close()
    server, url = start_server(authorization, keys.name)
    try:
        try:
            await exercise(url, authorization)
        except Exception as error:  # a crash is a failure, not the end of the run
            check("oauth", False, repr(error))
    finally:
        server.kill()
        server.wait()
        authorization.http.shutdown()
        os.unlink(keys.name)


anyio.run(main)
finish("python oauth client")
