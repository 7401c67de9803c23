#!/usr/bin/env python3
"""A reference stdio relay for the benchmark, written the way the Python MCP bridges in the
field are: asyncio streams, one `readline()` per message, the StreamReader limit raised.

    python3 asyncio_relay.py [--limit BYTES] -- SERVER [ARGS...]

It spawns SERVER and copies newline-delimited messages both ways: the client's stdin to the
server's stdin, the server's stdout to the client's stdout. Standard library only.

Why it looks like this (the sources are the public issues and pull requests named below;
docs/BENCHMARKS.md says how the benchmark uses it):

- asyncio's StreamReader refuses lines longer than its `limit`, 64 KiB by default, and the
  Python bridges that hit it raised the limit rather than reading in chunks:
  IBM/mcp-context-forge `mcpgateway.translate` (its stdio bridge) crashed with
  LimitOverrunError on large tool results (issue #2591); the fix (PR #2616) passes
  `limit=STDIO_BUFFER_LIMIT`, 16 MB, to `asyncio.create_subprocess_exec`.
  TokenRhythm/opensquilla (PR #953) likewise caps MCP stdio messages at 16 MiB.
  jupyter-ai-contrib/jupyter-ai-acp-client#32 and agiletec-inc/airis-mcp-gateway#38 are the
  same 64 KiB failure in other bridges.
- On a line over the limit `readline()` raises, the pump task dies, and the bridge shuts down
  (mcpgateway.translate logs "stdout pump crashed - terminating bridge"). This relay does the
  same: it reports the error on stderr and exits with status 1, so the client sees its stdout
  close. The benchmark reports that as the result of the 100 MB test.

So the default limit here is 16 MiB, what the field settled on; `--limit` raises it (the
benchmark also runs it with 1 GiB, to show what the design costs when the limit is not hit).
It does less than `warden bridge`: no JSON parsing or validation, no timeouts, no logging of
messages. That makes it the cheapest version of this design, not a strawman.
"""

import asyncio
import os
import sys

DEFAULT_LIMIT = 16 * 1024 * 1024


async def pump(reader, writer, name):
    """Copies lines until EOF. Returns on EOF; raises on a line over the limit."""
    while True:
        try:
            line = await reader.readline()
        except ValueError as e:
            # asyncio turns LimitOverrunError into ValueError in readline().
            raise RuntimeError(f"{name}: {e}") from e
        if not line:
            return
        writer.write(line)
        await writer.drain()


async def main(limit, argv):
    loop = asyncio.get_running_loop()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=limit,
    )

    # Our own stdin and stdout as asyncio streams, with the same limit.
    client_in = asyncio.StreamReader(limit=limit)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(client_in), os.fdopen(0, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(1, "wb", buffering=0)
    )
    client_out = asyncio.StreamWriter(transport, protocol, None, loop)

    to_server = asyncio.create_task(pump(client_in, proc.stdin, "client -> server"))
    to_client = asyncio.create_task(pump(proc.stdout, client_out, "server -> client"))
    done, _ = await asyncio.wait({to_server, to_client}, return_when=asyncio.FIRST_COMPLETED)

    status = 0
    for task in done:
        if task.exception() is not None:
            print(f"asyncio_relay: {task.exception()}; terminating", file=sys.stderr)
            status = 1
    if status == 0 and to_server in done:
        # The client closed stdin: pass the EOF on, deliver what the server still says.
        proc.stdin.close()
        try:
            await to_client
        except RuntimeError as e:
            print(f"asyncio_relay: {e}; terminating", file=sys.stderr)
            status = 1
    for task in (to_server, to_client):
        task.cancel()
    if proc.returncode is None:
        if status != 0:
            proc.kill()
        else:
            proc.stdin.close()
    await proc.wait()
    return status


def parse_args(args):
    limit = DEFAULT_LIMIT
    if args[:1] == ["--limit"] and len(args) > 1:
        limit = int(args[1])
        args = args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.exit("usage: asyncio_relay.py [--limit BYTES] -- SERVER [ARGS...]")
    return limit, args


if __name__ == "__main__":
    limit, argv = parse_args(sys.argv[1:])
    sys.exit(asyncio.run(main(limit, argv)))
