#!/usr/bin/env bash
# Measures the fake MCP server reached directly and through `warden bridge` (release build)
# and writes docs/BENCHMARKS.md. Takes about a minute after the build.
# BENCH_OUT=path writes the report elsewhere; BENCH_WARDEN=path measures another warden build.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -p warden-cli --bench bridge "$@"
