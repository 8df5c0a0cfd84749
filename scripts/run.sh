#!/usr/bin/env bash
# Runs the hermes-state CLI with the pinned Deno: `bash scripts/run.sh demo`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/scripts/toolchain.sh"
cd "$ROOT"
exec deno run -A cli.ts "$@"
