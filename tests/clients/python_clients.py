"""Drives a tool server with the official Python MCP SDK: the handshake-era ClientSession
and the auto-negotiating Client (2026-07-28), each over stdio and Streamable HTTP.

Usage: python_clients.py SERVER_BINARY
Prints one line per check and a closing "N passed, N failed" line; exits 1 on a failure.
"""

import sys

import anyio
from checks import PATIENCE, check, finish, serve_http
import mcp.types as types
from mcp import Client, ClientSession, MCPError, StdioServerParameters, UrlElicitationRequiredError, stdio_client
from mcp.client.streamable_http import streamable_http_client

SERVER = sys.argv[1]


async def exercise(label, client, version, expected_version):
    check(f"{label}: negotiated {expected_version}", version == expected_version, f"(got {version})")

    tools = await client.list_tools()
    names = {tool.name for tool in tools.tools}
    check(f"{label}: list", {"add_numbers", "test_simple_text", "test_tool_with_progress"} <= names, str(names))
    add = next(tool for tool in tools.tools if tool.name == "add_numbers")
    check(f"{label}: list shows the schema", add.input_schema["required"] == ["a", "b"], str(add.input_schema))

    # The output is the value at 2026-07-28; the handshake era's structured content must be
    # an object, so there a number comes as {"result": ...}.
    result = await client.call_tool("add_numbers", {"a": 2, "b": 3})
    structured = 5 if version == "2026-07-28" else {"result": 5}
    check(f"{label}: call", not result.is_error and result.structured_content == structured, str(result))
    check(f"{label}: call text", isinstance(result.content[0], types.TextContent) and result.content[0].text == "5", str(result.content))

    result = await client.call_tool("add_numbers", {"a": "two", "b": 3})
    text = result.content[0].text if result.content else ""
    check(
        f"{label}: argument error is a tool error the model can read",
        result.is_error and text == "invalid arguments for add_numbers: 'a' must be an integer; got \"two\"",
        text,
    )

    result = await client.call_tool("test_error_handling", {})
    check(f"{label}: tool error", result.is_error and "intentionally" in result.content[0].text, str(result))

    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    result = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
    check(
        f"{label}: progress",
        len(seen) == 3 and [p for p, _, _ in seen] == [0.0, 50.0, 100.0] and all(t == 100.0 for _, t, _ in seen),
        str(seen),
    )

    result = await client.call_tool("test_image_content", {})
    check(f"{label}: image content", isinstance(result.content[0], types.ImageContent) and result.content[0].mime_type == "image/png", str(result.content))

    await exercise_surfaces(label, client, expected_version)

    try:
        await client.call_tool("no_such_tool", {})
        check(f"{label}: unknown tool is a protocol error", False, "no error raised")
    except MCPError as error:
        check(f"{label}: unknown tool is a protocol error", error.code == -32602 and "no_such_tool" in error.message, f"{error.code} {error.message}")


async def exercise_surfaces(label, client, version):
    resources = await client.list_resources()
    uris = {str(resource.uri) for resource in resources.resources}
    check(f"{label}: list resources", {"test://static-text", "test://static-binary"} <= uris, str(uris))
    templates = await client.list_resource_templates()
    check(
        f"{label}: list resource templates",
        [t.uri_template for t in templates.resource_templates] == ["test://template/{id}/data"],
        str(templates),
    )
    read = await client.read_resource("test://static-text")
    content = read.contents[0]
    check(
        f"{label}: read a resource",
        getattr(content, "text", None) == "This is the content of the static text resource." and content.mime_type == "text/plain",
        str(read),
    )
    read = await client.read_resource("test://template/77/data")
    check(f"{label}: read through a template", '"id":"77"' in getattr(read.contents[0], "text", ""), str(read))
    try:
        await client.read_resource("test://no-such-resource")
        check(f"{label}: unknown resource is an error", False, "no error raised")
    except MCPError as error:
        # Resource not found: -32002 in the handshake era, -32602 at 2026-07-28 (SEP-2164).
        expected_code = -32602 if version == "2026-07-28" else -32002
        data = error.data
        check(
            f"{label}: unknown resource is an error with its URI",
            error.code == expected_code and isinstance(data, dict) and data.get("uri") == "test://no-such-resource",
            f"{error.code} {error.message} {data}",
        )

    prompts = await client.list_prompts()
    names = {prompt.name for prompt in prompts.prompts}
    check(f"{label}: list prompts", {"test_simple_prompt", "test_prompt_with_arguments"} <= names, str(names))
    got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "one", "arg2": "two"})
    text = got.messages[0].content.text if got.messages else ""
    check(f"{label}: get a prompt", text == "Prompt with arguments: arg1='one', arg2='two'", str(got))
    try:
        await client.get_prompt("test_prompt_with_arguments", {"arg1": "one"})
        check(f"{label}: a missing prompt argument is an error", False, "no error raised")
    except MCPError as error:
        check(f"{label}: a missing prompt argument is an error naming it", error.code == -32602 and "arg2" in error.message, f"{error.code} {error.message}")

    completed = await client.complete(
        types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
        {"name": "arg1", "value": "teste"},
        {"arg2": "x"},
    )
    check(f"{label}: complete an argument with context", completed.completion.values == ["tested-x"], str(completed))


asked = []


async def on_elicit(context, params):
    asked.append(("elicit", params.message))
    properties = params.requested_schema.get("properties", {})
    if "username" in properties:
        return types.ElicitResult(action="accept", content={"username": "ann", "email": "ann@example.com"})
    if "name" in properties:
        return types.ElicitResult(action="accept", content={"name": "Ann"})
    if "color" in properties:
        return types.ElicitResult(action="accept", content={"color": "teal"})
    return types.ElicitResult(action="decline")


async def on_sample(context, params):
    asked.append(("sample", params.messages[0].content.text))
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="Paris"),
        model="test-model",
        stop_reason="endTurn",
    )


async def on_roots(context):
    asked.append(("roots", None))
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/project", name="project")])


completed_pages = []


async def on_message(message):
    if isinstance(message, types.ElicitCompleteNotification):
        completed_pages.append(message.params.elicitation_id)


CALLBACKS = {"elicitation_callback": on_elicit, "sampling_callback": on_sample, "list_roots_callback": on_roots}
SESSION_CALLBACKS = {**CALLBACKS, "message_handler": on_message}


async def exercise_asking(label, client):
    """Tools that ask the client: each answered by this client's own callbacks, whether the
    question comes as a request during the call (handshake era) or with an input_required
    answer the client retries (2026-07-28)."""
    asked.clear()
    result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    text = result.content[0].text if result.content else ""
    check(f"{label}: elicitation reaches the user and the answer the tool",
          not result.is_error and '"username":"ann"' in text and ("elicit", "Who are you?") in asked, f"{text} {asked}")

    result = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
    text = result.content[0].text if result.content else ""
    check(f"{label}: sampling reaches the model and its answer the tool",
          text == "LLM response: Paris" and ("sample", "Capital of France?") in asked, f"{text} {asked}")

    result = await client.call_tool("test_input_required_result_list_roots", {})
    text = result.content[0].text if result.content else ""
    check(f"{label}: roots", text == "Found 1 root(s): file:///srv/project", text)

    result = await client.call_tool("test_input_required_result_multi_round", {})
    text = result.content[0].text if result.content else ""
    check(f"{label}: a second question after the first answer", text == "Ann likes teal.", text)


async def exercise_url_required(label, session, account):
    """A tool that needs the user at a page first (2025-11-25): its call fails with -32042
    listing the page, the page tells the client when the user is done
    (notifications/elicitation/complete), and the call made again goes through."""
    try:
        await session.call_tool("list_account_files", {"account": account})
        check(f"{label}: a page is required first", False, "the call went through")
        return
    except MCPError as error:
        check(f"{label}: a page is required first (-32042)", error.code == -32042, repr(error))
        required = UrlElicitationRequiredError.from_error(error.error)
    page = required.elicitations[0]
    check(f"{label}: the error lists the page",
          page.url == f"https://example.com/connect?account={account}" and len(page.elicitation_id) == 32,
          str(page))
    with anyio.fail_after(PATIENCE):
        while page.elicitation_id not in completed_pages:
            await anyio.sleep(0.02)
    result = await session.call_tool("list_account_files", {"account": account})
    text = result.content[0].text if result.content else ""
    check(f"{label}: once told the user is done, the call made again goes through",
          text == f"Files of {account}: notes.txt", text)


def stdio_params():
    return StdioServerParameters(command=SERVER, args=["serve"])


async def session_stdio():
    async with stdio_client(stdio_params()) as (read, write):
        async with ClientSession(read, write, **SESSION_CALLBACKS) as session:
            init = await session.initialize()
            check("ClientSession/stdio: serverInfo names the program", init.server_info.name == "conformance-server", str(init.server_info))
            await exercise("ClientSession/stdio", session, init.protocol_version, "2025-11-25")
            await exercise_asking("ClientSession/stdio", session)
            await exercise_url_required("ClientSession/stdio", session, "ann")


async def session_http(url):
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write, **SESSION_CALLBACKS) as session:
            init = await session.initialize()
            await exercise("ClientSession/http", session, init.protocol_version, "2025-11-25")
            await exercise_asking("ClientSession/http", session)
            await exercise_url_required("ClientSession/http", session, "bea")


async def client_stdio():
    async with Client(stdio_params(), **CALLBACKS) as client:
        await exercise("Client/stdio", client, client.protocol_version, "2026-07-28")
        await exercise_asking("Client/stdio", client)


async def client_http(url):
    async with Client(url, **CALLBACKS) as client:
        await exercise("Client/http", client, client.protocol_version, "2026-07-28")
        await exercise_asking("Client/http", client)


async def main():
    for run in (session_stdio, client_stdio):
        try:
            await run()
        except Exception as error:  # a crash is a failure, not the end of the run
            check(run.__name__, False, repr(error))
    server, port = serve_http([SERVER, "serve"])
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        for run in (session_http, client_http):
            try:
                await run(url)
            except Exception as error:
                check(run.__name__, False, repr(error))
    finally:
        server.kill()
        server.wait()


anyio.run(main)
finish("python clients")
