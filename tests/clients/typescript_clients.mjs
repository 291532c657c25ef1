// Drives a tool server with the official TypeScript MCP SDK (@modelcontextprotocol/sdk,
// pinned in package.json): its Client over stdio (`SERVER serve`) and over Streamable HTTP
// (`SERVER serve --http 127.0.0.1:PORT`). The same checks as python_clients.py, as far as
// SDK 1.x goes: it speaks the handshake-era protocol (2025-11-25) only.
//
// Usage: CONFORMANCE_DIR=.../node_modules node typescript_clients.mjs SERVER_BINARY
// (scripts/client-env.sh exports CONFORMANCE_DIR: the node_modules the SDK is installed in.)
// Prints one line per check and a closing "N passed, N failed" line; exits 1 on a failure.
// Every request, connection and run has a timeout, and a watchdog ends a hung run.

import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const SERVER = process.argv[2];
const MODULES = process.env.CONFORMANCE_DIR;
if (!SERVER || !MODULES) {
    console.error('usage: CONFORMANCE_DIR=NODE_MODULES node typescript_clients.mjs SERVER_BINARY');
    process.exit(2);
}
const sdk = (file) =>
    import(pathToFileURL(path.join(MODULES, '@modelcontextprotocol/sdk/dist/esm', file)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { McpError } = await sdk('types.js');
const { AjvJsonSchemaValidator } = await sdk('validation/ajv-provider.js');

const REQUEST_MS = 10_000; // one request, or the connection handshake
const RUN_MS = 60_000; // one client's whole run
const WATCHDOG_MS = 180_000; // the whole script
const request = { timeout: REQUEST_MS };
const ARGUMENT_ERROR =
    "invalid arguments for add_numbers: 'a' must be an integer; got \"two\"";

let passed = 0;
let failed = 0;
let httpServer; // the HTTP server child, killed at the end (or by the watchdog)

function check(label, condition, detail = '') {
    if (condition) {
        passed += 1;
        console.log(`passed   ${label}`);
    } else {
        failed += 1;
        console.log(`FAILED   ${label} ${detail}`);
    }
}

function withTimeout(promise, ms, what) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const show = (value) => JSON.stringify(value);
// An error on one line: its name and message, whitespace squeezed (a ZodError spans lines).
const describe = (error) => `${error?.name ?? 'Error'}: ${error?.message ?? error}`.replace(/\s+/g, ' ');

// Runs one check: `body` returns [condition, detail]; a throw or a timeout is a failure.
async function step(label, body) {
    try {
        const [condition, detail] = await withTimeout(body(), REQUEST_MS + 2_000, label);
        check(label, condition, detail);
    } catch (error) {
        check(label, false, `(threw ${describe(error)})`);
    }
}

async function exercise(label, client, version, tap) {
    await step(`${label}: negotiated 2025-11-25`, async () => [version === '2025-11-25', `(got ${version})`]);
    await step(`${label}: serverInfo names the program`, async () => {
        const info = client.getServerVersion();
        return [info?.name === 'conformance-server', show(info)];
    });
    await step(`${label}: ping`, async () => [(await client.ping(request)) !== undefined, '']);

    // The SDK parses tools/list with its own schemas: a schema it rejects fails the whole list.
    let tools = [];
    await step(`${label}: list (the SDK accepts every tool)`, async () => {
        tools = (await client.listTools(undefined, request)).tools;
        const names = tools.map((tool) => tool.name);
        // describe_value takes any JSON value and a struct with an Option field: the list
        // holds only if the server publishes those without boolean schemas.
        const want = ['add_numbers', 'describe_value', 'test_simple_text', 'test_tool_with_progress'];
        return [want.every((name) => names.includes(name)), show(names)];
    });
    await step(`${label}: list shows the schema`, async () => {
        const add = tools.find((tool) => tool.name === 'add_numbers');
        return [show(add?.inputSchema?.required) === show(['a', 'b']), add ? show(add.inputSchema) : '(not listed)'];
    });
    await step(`${label}: every schema compiles in the SDK's validator (Ajv)`, async () => {
        const validator = new AjvJsonSchemaValidator();
        const broken = [];
        for (const tool of tools) {
            for (const schema of [tool.inputSchema, tool.outputSchema].filter(Boolean)) {
                try {
                    validator.getValidator(schema);
                } catch (error) {
                    broken.push(`${tool.name}: ${error.message}`);
                }
            }
        }
        return [tools.length > 0 && broken.length === 0, tools.length ? show(broken) : '(no tools listed)'];
    });

    // After a good list the SDK also checks structuredContent against add_numbers' outputSchema.
    await step(`${label}: call`, async () => {
        const result = await client.callTool({ name: 'add_numbers', arguments: { a: 2, b: 3 } }, undefined, request);
        const ok = !result.isError && show(result.structuredContent) === show({ result: 5 });
        const text = result.content?.[0]?.type === 'text' && result.content[0].text === '5';
        return [ok && text, show(result)];
    });
    await step(`${label}: argument error is a tool error the model can read`, async () => {
        const result = await client.callTool({ name: 'add_numbers', arguments: { a: 'two', b: 3 } }, undefined, request);
        const text = result.content?.[0]?.text ?? '';
        return [result.isError === true && text === ARGUMENT_ERROR, text];
    });
    await step(`${label}: tool error`, async () => {
        const result = await client.callTool({ name: 'test_error_handling', arguments: {} }, undefined, request);
        return [result.isError === true && /intentionally/.test(result.content?.[0]?.text ?? ''), show(result)];
    });
    // Progress: what the server sent (read off the wire) and what the SDK handed to onprogress.
    // SDK 1.x dispatches notifications a microtask late but responses at once, so a progress
    // notification that arrives in the same read as the result is reported to onerror as an
    // "unknown token" instead (typescript-sdk#2580, a client race no server can avoid).
    const seen = [];
    let sent = [];
    let late = 0;
    await step(`${label}: progress: the server sends 0, 50, 100 of 100 before the result`, async () => {
        tap.wire.length = 0;
        const onprogress = (progress) => seen.push(progress);
        const result = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, { ...request, onprogress });
        await new Promise((resolve) => setImmediate(resolve)); // let late notification handlers run
        const isProgress = (message) => message.method === 'notifications/progress';
        sent = tap.wire.filter(isProgress).map(({ params: { progressToken, ...params } }) => params);
        const isLate = (error) => /progress notification for an unknown token/.test(error.message);
        late = tap.errors.filter(isLate).length;
        tap.errors = tap.errors.filter((error) => !isLate(error));
        const inOrder = tap.wire.findLastIndex(isProgress) < tap.wire.findIndex((message) => 'result' in message);
        const values = show(sent.map((p) => p.progress)) === show([0, 50, 100]) && sent.every((p) => p.total === 100);
        return [values && inOrder && !result.isError, show(tap.wire)];
    });
    const race = late ? ` (the last ${late} lost to the SDK race typescript-sdk#2580)` : '';
    await step(`${label}: progress reaches onprogress${race}`, async () => {
        const triples = (list) => show(list.map(({ progress, total, message }) => [progress, total, message]));
        const delivered = seen.length > 0 && triples(seen) === triples(sent.slice(0, seen.length));
        return [delivered && seen.length + late === 3, `onprogress ${show(seen)}, late ${late}`];
    });
    await step(`${label}: image content`, async () => {
        const result = await client.callTool({ name: 'test_image_content', arguments: {} }, undefined, request);
        const image = result.content?.[0];
        return [image?.type === 'image' && image.mimeType === 'image/png' && image.data.length > 0, show(result.content)];
    });
    await step(`${label}: unknown tool is a protocol error`, async () => {
        try {
            const result = await client.callTool({ name: 'no_such_tool', arguments: {} }, undefined, request);
            return [false, `(no error raised: ${show(result)})`];
        } catch (error) {
            const ok = error instanceof McpError && error.code === -32602 && error.message.includes('no_such_tool');
            return [ok, `${error.code} ${error.message}`];
        }
    });
    await exerciseSurfaces(label, client);
    await step(`${label}: the SDK reported no other errors`, async () => [tap.errors.length === 0, show(tap.errors.map(String))]);
}

// Resources, prompts and completion, through the SDK's own result schemas.
async function exerciseSurfaces(label, client) {
    await step(`${label}: list resources`, async () => {
        const uris = (await client.listResources(undefined, request)).resources.map((r) => r.uri);
        return [uris.includes('test://static-text') && uris.includes('test://static-binary'), show(uris)];
    });
    await step(`${label}: list resource templates`, async () => {
        const templates = (await client.listResourceTemplates(undefined, request)).resourceTemplates;
        return [show(templates.map((t) => t.uriTemplate)) === show(['test://template/{id}/data']), show(templates)];
    });
    await step(`${label}: read a resource`, async () => {
        const read = await client.readResource({ uri: 'test://static-text' }, request);
        const content = read.contents[0];
        return [content?.text === 'This is the content of the static text resource.' && content.mimeType === 'text/plain', show(read)];
    });
    await step(`${label}: read a binary resource`, async () => {
        const read = await client.readResource({ uri: 'test://static-binary' }, request);
        return [read.contents[0]?.mimeType === 'image/png' && read.contents[0].blob.length > 0, show(read)];
    });
    await step(`${label}: read through a template`, async () => {
        const read = await client.readResource({ uri: 'test://template/77/data' }, request);
        return [(read.contents[0]?.text ?? '').includes('"id":"77"'), show(read)];
    });
    await step(`${label}: unknown resource is an error with its URI`, async () => {
        try {
            const read = await client.readResource({ uri: 'test://no-such-resource' }, request);
            return [false, `(no error raised: ${show(read)})`];
        } catch (error) {
            return [error instanceof McpError && error.code === -32002 && error.data?.uri === 'test://no-such-resource', `${error.code} ${error.message}`];
        }
    });
    await step(`${label}: list prompts`, async () => {
        const names = (await client.listPrompts(undefined, request)).prompts.map((p) => p.name);
        return [names.includes('test_simple_prompt') && names.includes('test_prompt_with_arguments'), show(names)];
    });
    await step(`${label}: get a prompt`, async () => {
        const got = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'one', arg2: 'two' } }, request);
        return [got.messages[0]?.content?.text === "Prompt with arguments: arg1='one', arg2='two'", show(got)];
    });
    await step(`${label}: a missing prompt argument is an error naming it`, async () => {
        try {
            const got = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'one' } }, request);
            return [false, `(no error raised: ${show(got)})`];
        } catch (error) {
            return [error instanceof McpError && error.code === -32602 && error.message.includes('arg2'), `${error.code} ${error.message}`];
        }
    });
    await step(`${label}: complete an argument with context`, async () => {
        const completed = await client.complete(
            {
                ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
                argument: { name: 'arg1', value: 'teste' },
                context: { arguments: { arg2: 'x' } },
            },
            request,
        );
        return [show(completed.completion.values) === show(['tested-x']), show(completed)];
    });
}

// Connects a Client over `transport`, noting the protocol version it negotiates (the SDK
// hands it to transport.setProtocolVersion), runs the checks, and closes the client.
async function run(label, transport) {
    let version;
    const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
    transport.setProtocolVersion = (negotiated) => {
        version = negotiated;
        setProtocolVersion?.(negotiated);
    };
    const client = new Client({ name: 'typescript-clients-test', version: '1.0.0' });
    try {
        await withTimeout(
            (async () => {
                await client.connect(transport, request);
                // Tap what arrives (after the handshake) and what the SDK reports to onerror.
                const tap = { wire: [], errors: [] };
                const deliver = transport.onmessage;
                transport.onmessage = (message, extra) => {
                    tap.wire.push(message);
                    deliver(message, extra);
                };
                client.onerror = (error) => tap.errors.push(error);
                await exercise(label, client, version, tap);
            })(),
            RUN_MS,
            label,
        );
    } catch (error) {
        check(label, false, `(threw ${describe(error)})`); // a crash is a failure, not the end
    } finally {
        await withTimeout(client.close(), 5_000, `${label}: close`).catch(() => {});
    }
}

function freePort() {
    return new Promise((resolve, reject) => {
        const probe = net.createServer().once('error', reject);
        probe.listen(0, '127.0.0.1', () => {
            const { port } = probe.address();
            probe.close(() => resolve(port));
        });
    });
}

// Waits until something listens on 127.0.0.1:port, or `gone()` (the server failed to start or
// exited), or the time is up.
async function waitForPort(port, gone, ms = 10_000) {
    for (const deadline = Date.now() + ms; Date.now() < deadline && !gone(); ) {
        const socket = net.connect({ host: '127.0.0.1', port });
        const open = await new Promise((resolve) => {
            socket.once('connect', () => resolve(true));
            socket.once('error', () => resolve(false));
            socket.setTimeout(200, () => resolve(false));
        });
        socket.destroy();
        if (open) return true;
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return false;
}

function killHttpServer() {
    if (httpServer?.pid && httpServer.exitCode === null && httpServer.signalCode === null) {
        try {
            process.kill(httpServer.pid, 'SIGKILL');
        } catch {}
    }
}

const watchdog = setTimeout(() => {
    check('watchdog', false, `(the run took over ${WATCHDOG_MS} ms)`);
    console.log(`${passed} passed, ${failed} failed`);
    killHttpServer();
    process.exit(1);
}, WATCHDOG_MS);

await run('Client/stdio', new StdioClientTransport({ command: SERVER, args: ['serve'], stderr: 'inherit' }));

const port = await freePort();
let spawnError;
httpServer = spawn(SERVER, ['serve', '--http', `127.0.0.1:${port}`], { stdio: 'ignore' });
httpServer.once('error', (error) => (spawnError = error));
try {
    const gone = () => spawnError !== undefined || httpServer.exitCode !== null;
    if (await waitForPort(port, gone)) {
        await run('Client/http', new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    } else {
        const why = spawnError ? describe(spawnError) : `the server never listened on 127.0.0.1:${port}`;
        check('Client/http', false, `(${why})`);
    }
} finally {
    killHttpServer();
}

clearTimeout(watchdog);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
