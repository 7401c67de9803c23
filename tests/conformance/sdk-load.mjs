// Load through one stdio session with the real TypeScript MCP SDK client: REQUESTS `echo` calls,
// CONCURRENCY in flight at once, each with its own message, and each answer checked against its
// own message (a response routed to the wrong request counts as an error).
//
//   node sdk-load.mjs --requests 1000 --concurrency 20 -- COMMAND [ARG]...
//
// Prints one JSON object: requests, ok, errors, errorMessages, latencyMs {min,p50,p95,p99,max,mean},
// elapsedMs. Exit 0 when every call succeeded, 1 when any failed, 2 on a usage or connect error.
// The server's stderr goes to this process's stderr.
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

function parseArgs(argv) {
  const opts = { requests: 1000, concurrency: 20, tool: 'echo', command: [] };
  const sep = argv.indexOf('--');
  const flags = sep === -1 ? argv : argv.slice(0, sep);
  opts.command = sep === -1 ? [] : argv.slice(sep + 1);
  for (let i = 0; i < flags.length; i += 2) {
    const value = Number(flags[i + 1]);
    if (flags[i] === '--requests') opts.requests = value;
    else if (flags[i] === '--concurrency') opts.concurrency = value;
    else throw new Error(`unknown option ${flags[i]}`);
  }
  for (const key of ['requests', 'concurrency']) {
    if (!Number.isInteger(opts[key]) || opts[key] < 1) throw new Error(`--${key} needs a positive integer`);
  }
  if (opts.command.length === 0) throw new Error('usage: sdk-load.mjs [--requests N] [--concurrency N] -- COMMAND [ARG]...');
  return opts;
}

function percentile(sorted, p) {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1];
}

const round = (n) => Math.round(n * 100) / 100;

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`sdk-load: ${err.message}`);
    return 2;
  }
  const [command, ...args] = opts.command;
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
  const client = new Client({ name: 'warden-sdk-load', version: '0.0.0' }, { capabilities: {} });
  try {
    await client.connect(transport);
  } catch (err) {
    console.error(`sdk-load: connect failed: ${err.message}`);
    return 2;
  }

  const latencies = [];
  const errors = new Map();
  let ok = 0;
  let failed = 0;
  let next = 0;
  const fail = (message) => {
    failed++;
    errors.set(message, (errors.get(message) ?? 0) + 1);
  };
  const worker = async () => {
    while (next < opts.requests) {
      const i = next++;
      const message = `#${i}#`;
      const t0 = performance.now();
      try {
        const result = await client.callTool({ name: opts.tool, arguments: { message } });
        const text = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
        if (result.isError) fail(`tool error: ${text.slice(0, 200)}`);
        else if (!text.includes(message)) fail('answer does not carry its own request\'s message');
        else ok++;
      } catch (err) {
        fail(err instanceof Error ? err.message : String(err));
      }
      latencies.push(performance.now() - t0);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const elapsedMs = performance.now() - start;
  await client.close();

  const sorted = [...latencies].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, n) => sum + n, 0) / sorted.length;
  const summary = {
    client: 'TypeScript SDK',
    tool: opts.tool,
    concurrency: opts.concurrency,
    requests: latencies.length,
    ok,
    errors: failed,
    errorMessages: [...errors].map(([message, count]) => ({ message, count })),
    elapsedMs: round(elapsedMs),
    throughput: round((latencies.length * 1000) / elapsedMs),
    latencyMs: {
      min: round(sorted[0]),
      mean: round(mean),
      p50: round(percentile(sorted, 50)),
      p95: round(percentile(sorted, 95)),
      p99: round(percentile(sorted, 99)),
      max: round(sorted[sorted.length - 1]),
    },
  };
  console.log(JSON.stringify(summary));
  return failed === 0 ? 0 : 1;
}

process.exitCode = await main();
