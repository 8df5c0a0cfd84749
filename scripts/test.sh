#!/usr/bin/env bash
# The whole check: format, lint, types, publish dry run, the README's demo, then the test suite on
# Deno, Bun and Node 24, then the compiled executable. Installs the toolchain first.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/scripts/toolchain.sh"
cd "$ROOT"
# The Python implementation's files and answers the tests replay live beside the repository.
if [ ! -f "$ROOT/../shared/fixtures/hermes-v11.db" ]; then
  echo "test.sh: the fixtures are missing: the tests read ../shared/fixtures/ beside the repository ($(cd "$ROOT/.." && pwd)/shared/fixtures)" >&2
  exit 1
fi
# They are single files: a -wal or -shm beside one means something opened it in place (even a
# read-only open makes them), and the tests that copy a fixture would copy them too.
for sidecar in "$ROOT"/../shared/fixtures/*.db-wal "$ROOT"/../shared/fixtures/*.db-shm; do
  if [ -e "$sidecar" ]; then
    echo "test.sh: $sidecar should not exist: a fixture was opened in place (copy it first); remove the file" >&2
    exit 1
  fi
done
# npm packages loaded only where used (README, "Dependencies"), pinned by package-lock.json.
if [ "$(cat node_modules/.hermes-lock 2>/dev/null)" != "$(sha256sum <package-lock.json)" ]; then
  npm ci --no-audit --no-fund --loglevel=error >&2
  sha256sum <package-lock.json >node_modules/.hermes-lock
fi
# The browser tests drive Debian's chromium (installed with the CJK and emoji fonts when missing).
export HERMES_TEST_CHROMIUM="${HERMES_TEST_CHROMIUM:-$(bash "$ROOT/scripts/chromium.sh")}"
step() { printf '\n== %s (at %d s)\n' "$*" "$SECONDS" >&2; }

# The run's temporary files (the test databases and PostgreSQL clusters) go in memory when /dev/shm
# has room and TMPDIR names no other place: the Deno suite alone writes some 13 GB, syncing every
# commit, and on a disk a fifth of its run waited on those syncs. No test needs its files to outlive
# the machine.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] &&
  [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -ge $((6 * 1024 * 1024)) ]; then
  export TMPDIR=/dev/shm
fi
# Four test files at a time on each runtime, on a machine of two cores: the tests mostly wait (on the
# processes they start, the servers, the browser, their timers), and two at a time kept only 1.2 of
# the 2 cores busy.
JOBS=4

# What the run starts and makes is stopped and removed when it ends, however it ends.
PG_DIR="" PGB_DIR="" TEST_TMP="" DOC_PID=""
cleanup() {
  [ -z "$DOC_PID" ] || kill "$DOC_PID" 2>/dev/null || true
  [ -z "$PGB_DIR" ] || bash "$ROOT/scripts/pgbouncer.sh" stop "$PGB_DIR"
  [ -z "$PG_DIR" ] || bash "$ROOT/scripts/pg.sh" stop "$PG_DIR"
  [ -z "$TEST_TMP" ] || rm -rf "$TEST_TMP"
}
trap cleanup EXIT
# A throwaway PostgreSQL cluster for the PostgreSQL tests (scripts/pg.sh), unless
# HERMES_TEST_PG_URL already names a server. Without one the PostgreSQL tests skip,
# except under CI=true, where a server that does not start fails the run.
if [ -z "${HERMES_TEST_PG_URL:-}" ]; then
  PG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/hermes-pg-XXXXXX")"
  if HERMES_TEST_PG_URL="$(bash "$ROOT/scripts/pg.sh" start "$PG_DIR")"; then
    export HERMES_TEST_PG_URL
  else
    [ "${CI:-}" = true ] && { echo "PostgreSQL did not start" >&2; exit 1; }
    echo "PostgreSQL did not start: its tests will skip" >&2
    unset HERMES_TEST_PG_URL
  fi
fi
# PgBouncer in transaction mode in front of it, for the tests of ?pgbouncer=true
# (scripts/pgbouncer.sh), unless HERMES_TEST_PGBOUNCER_URL already names one.
if [ -n "${HERMES_TEST_PG_URL:-}" ] && [ -z "${HERMES_TEST_PGBOUNCER_URL:-}" ]; then
  PGB_DIR="$(mktemp -d "${TMPDIR:-/tmp}/hermes-pgbouncer-XXXXXX")"
  if HERMES_TEST_PGBOUNCER_URL="$(bash "$ROOT/scripts/pgbouncer.sh" start "$PGB_DIR" "$HERMES_TEST_PG_URL")"; then
    export HERMES_TEST_PGBOUNCER_URL
  else
    [ "${CI:-}" = true ] && { echo "PgBouncer did not start" >&2; exit 1; }
    echo "PgBouncer did not start: its tests will skip" >&2
  fi
fi

# The checks' temporary files go in one folder of their own, removed at the end: the JSDoc
# examples make a folder each (`Deno.makeTempDir()`, as a reader would) and never remove it, and a
# test killed midway leaves its own. Others may pass through it (not list it): a test's own
# PostgreSQL cluster lives directly in it and runs as the postgres user.
TEST_TMP="$(mktemp -d "${TMPDIR:-/tmp}/hermes-test-XXXXXX")"
chmod 711 "$TEST_TMP"
export TMPDIR="$TEST_TMP"
# Node compiles every module again in each process: each test file's, and each CLI or worker process
# a test starts. Its compile cache, shared by them all, takes a quarter off the Node run.
export NODE_COMPILE_CACHE="$TEST_TMP/node-compile-cache"

step "versions"
deno --version | head -1; bun --version; node --version

step "deno fmt --check"; deno fmt --check
step "deno lint"; deno lint
step "deno check"; deno task -q check
step "deno doc --lint"; deno doc --lint mod.ts
step "deno publish --dry-run"; deno publish --dry-run --allow-dirty 2>&1 | tail -3

# The README's first command, as a user on a fresh machine runs it (its database goes in $TMPDIR).
step "bash scripts/run.sh demo"; (cd "$TEST_TMP" && bash "$ROOT/scripts/run.sh" demo | tail -3)
# `deno check` above checked every test file's types: the test run does not check them again.
step "tests on Deno"; DENO_JOBS=$JOBS deno test -A --lock=tests/deno.lock --frozen --no-check --parallel tests/
# The documentation examples run beside the tests on Bun: their run is mostly a type check, which
# keeps one core of two busy; alone, the other waited (half a minute on a slow machine).
step "documentation examples (README, JSDoc), beside the tests on Bun"
DOC_LOG="$TEST_TMP/documentation-examples.log"
deno test -A --lock=tests/deno.lock --frozen --doc README.md mod.ts lib/ >"$DOC_LOG" 2>&1 &
DOC_PID=$!
# Bun alone gives each test 5 s unless it says otherwise (Deno and Node give no limit): on a slow
# machine that fails correctness tests by the clock. A minute still ends a test that hangs. Worker
# processes of one file each at a time, as Deno's --parallel and Node's concurrency run them.
step "tests on Bun"; bun test --parallel=$JOBS --timeout 60000 tests/
step "documentation examples: their result"
if wait "$DOC_PID"; then DOC_PID=""; tail -3 "$DOC_LOG"; else
  DOC_PID=""; cat "$DOC_LOG"; echo "the documentation examples failed" >&2; exit 1
fi
if [ -x scripts/e2e.sh ]; then step "compiled executable (bun build --compile)"; bash scripts/e2e.sh; fi
step "tests on Node $(node --version)"; node --test --test-concurrency=$JOBS "tests/**/*_test.ts"
step "all passed"
