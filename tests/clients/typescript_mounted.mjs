// The official TypeScript SDK (@modelcontextprotocol/sdk, pinned in package.json) calling
// tools of servers nobody here wrote, mounted behind our server: server-everything's,
// FastMCP's and rmcp's, a question FastMCP asks, answered by this client, and a failed
// answer of FastMCP's with more than words.
//
// Usage: CONFORMANCE_DIR=.../node_modules node typescript_mounted.mjs URL
// Prints one line per check; exits 1 on a failure. Every request has a timeout.

import path from 'node:path';
import { pathToFileURL } from 'node:url';

const URL_ = process.argv[2];
const MODULES = process.env.CONFORMANCE_DIR;
if (!URL_ || !MODULES) {
    console.error('usage: CONFORMANCE_DIR=NODE_MODULES node typescript_mounted.mjs URL');
    process.exit(2);
}
const sdk = (file) =>
    import(pathToFileURL(path.join(MODULES, '@modelcontextprotocol/sdk/dist/esm', file)).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { ElicitRequestSchema } = await sdk('types.js');

const request = { timeout: 30_000 };
let failed = 0;
function check(label, condition, detail = '') {
    console.log(`${condition ? 'passed' : 'FAILED'}   TypeScript SDK through mounts: ${label} ${condition ? '' : detail}`);
    if (!condition) failed += 1;
}
const text = (result) => (result.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');

const watchdog = setTimeout(() => {
    console.error('no end within 120 s');
    process.exit(1);
}, 120_000);

const client = new Client(
    { name: 'typescript-mounted-test', version: '1.0.0' },
    { capabilities: { elicitation: {} } },
);
client.setRequestHandler(ElicitRequestSchema, async (asked) => {
    const content = {};
    for (const [name, property] of Object.entries(asked.params.requestedSchema?.properties ?? {})) {
        content[name] = property.default ?? (property.type === 'string' ? 'teal' : true);
    }
    return { action: 'accept', content };
});
await client.connect(new StreamableHTTPClientTransport(new URL(URL_)));

let names = new Set();
for (let tries = 0; tries < 300 && !['ev_get-sum', 'fm_multiply', 'rm_add'].every((n) => names.has(n)); tries++) {
    const listed = await client.listTools(undefined, request);
    names = new Set(listed.tools.map((tool) => tool.name));
    if (!names.has('rm_add')) await new Promise((done) => setTimeout(done, 100));
}
check('every mount is listed', ['ev_get-sum', 'fm_multiply', 'rm_add'].every((n) => names.has(n)), [...names].join(','));

const sum = await client.callTool({ name: 'ev_get-sum', arguments: { a: 2, b: 3 } }, undefined, request);
check("server-everything's get-sum", text(sum) === 'The sum of 2 and 3 is 5.', JSON.stringify(sum));
const product = await client.callTool({ name: 'fm_multiply', arguments: { a: 6, b: 7 } }, undefined, request);
check("FastMCP's multiply", text(product) === '42' && !product.isError, JSON.stringify(product));
const added = await client.callTool({ name: 'rm_add', arguments: { a: 2, b: 40 } }, undefined, request);
check("rmcp's add", text(added).includes('42') && !added.isError, JSON.stringify(added));
const colour = await client.callTool({ name: 'fm_favourite_colour', arguments: {} }, undefined, request);
check("FastMCP's question answered by this client", text(colour) === 'you like teal', JSON.stringify(colour));
const refused = await client.callTool({ name: 'fm_reserve', arguments: { sku: 'A-1' } }, undefined, request);
check(
    "FastMCP's failed answer, as it sent it",
    refused.isError === true &&
        refused.content.length === 2 &&
        refused.content[0].annotations?.priority === 0.9 &&
        refused.content[1].type === 'image' &&
        refused.structuredContent?.instead?.[0] === 'B-2',
    JSON.stringify(refused),
);

await client.close();
clearTimeout(watchdog);
process.exit(failed ? 1 : 0);
