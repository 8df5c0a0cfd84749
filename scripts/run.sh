#!/usr/bin/env bash
# Runs the hermes-state CLI with the pinned Deno: `bash scripts/run.sh demo`.
# Paths on the command line are read from the folder you run it in, as the CLI's own.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/scripts/toolchain.sh"
exec deno run -A --config "$ROOT/deno.json" "$ROOT/cli.ts" "$@"
