#!/usr/bin/env bash
# Runs the hermes-state CLI with the pinned Deno: `bash scripts/run.sh demo`.
# Paths on the command line are read from the folder you run it in, as the CLI's own.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The toolchain turns colour off for the checks; the CLI keeps the user's own NO_COLOR.
NO_COLOR_GIVEN="${NO_COLOR+given}" NO_COLOR_VALUE="${NO_COLOR-}"
. "$ROOT/scripts/toolchain.sh"
if [ -n "$NO_COLOR_GIVEN" ]; then export NO_COLOR="$NO_COLOR_VALUE"; else unset NO_COLOR; fi
exec deno run -A --config "$ROOT/deno.json" "$ROOT/cli.ts" "$@"
