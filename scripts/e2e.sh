#!/usr/bin/env bash
# Builds the single executable with `bun build --compile` and runs it end to
# end on a copy of the v11 fixture: completions, list, search (English and CJK), show
# (and --follow while Python's sqlite3 writes),
# `export - | import -` into a new file (same sessions and messages), and
# --json output that parses; serve; and, with HERMES_TEST_PG_URL (required
# under CI=true), migrate, copy, search, sync and doctor on that PostgreSQL server
# through its Unix socket. Exits non-zero on the first failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
command -v bun >/dev/null || export PATH="$ROOT/.tools/node_modules/.bin:$PATH"
export NO_COLOR=1

FIXTURE="$ROOT/../shared/fixtures/hermes-v11.db"
BIN="${HERMES_E2E_BIN:-$ROOT/dist/hermes-state}" # HERMES_E2E_BIN builds it elsewhere
WORK="$(mktemp -d "${TMPDIR:-/tmp}/hermes-state-e2e-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

fail() { echo "e2e: FAILED: $*" >&2; exit 1; }
step() { echo "e2e: $*" >&2; }
# Runs the binary; its stdout goes to $WORK/out, and a non-zero exit fails the run.
run() { "$BIN" "$@" >"$WORK/out" 2>"$WORK/err" || fail "hermes-state $* exited $? ($(cat "$WORK/err"))"; }
contains() { grep -qF -- "$1" "$WORK/out" || fail "output of the last command lacks: $1"; }
json_ok() { bun -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' "$1" ||
  fail "not JSON: $1"; }

step "building $BIN"
mkdir -p "$(dirname "$BIN")"
bun build --compile --bytecode --format=esm cli.ts lib/web/_search_worker.ts --outfile "$BIN" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log" >&2; fail "bun build"; }

DB="$WORK/state.db"
cp "$FIXTURE" "$DB"
chmod 600 "$DB"

step "--version, --help"
run --version; contains "hermes-state $(bun -e 'console.log(require("./deno.json").version)')"
run --help; contains "Commands:"

step "completions bash, zsh, fish (loads every command's module)"
run completions bash; contains "complete -o default -F _hermes_state hermes-state"
bash -n "$WORK/out" || fail "the completion script is not valid bash"
grep -qF '    sync) opts=' "$WORK/out" || fail "the completion script lacks the sync command"
run completions zsh; contains "compdef _hermes_state hermes-state"
if command -v zsh >/dev/null; then zsh -n "$WORK/out" || fail "the completion script is not valid zsh"; fi
run completions fish; contains "complete -c hermes-state"
if command -v fish >/dev/null; then
  fish --no-execute "$WORK/out" || fail "the completion script is not valid fish"
fi

step "list"
BEFORE="$(cd "$WORK" && sha256sum state.db*)"
run --db "$DB" list --limit 50
contains "my project #3"; contains "20260425_090019_d38f1d"; contains "Last Active"
run --db "$DB" list --json; json_ok "$WORK/out"

step "search docker"
run --db "$DB" search docker
contains ">>>docker<<<"; contains "1. "
run --db "$DB" search docker --json; json_ok "$WORK/out"

step "search 记忆"
run --db "$DB" search 记忆
contains "记忆断裂排查"

step "show"
run --db "$DB" show 20260425_090019_d38f1d
contains "my project #3"; contains "── user · "
run --db "$DB" show "my project #3" --json; json_ok "$WORK/out"

step "lineage, stats, info"
run --db "$DB" lineage 20260425_090019_d38f1d; contains "[compression]"
run --db "$DB" stats --json; json_ok "$WORK/out"
run --db "$DB" info --json --no-check; json_ok "$WORK/out"; contains '"schema_version": 11'
[ "$(cd "$WORK" && sha256sum state.db*)" = "$BEFORE" ] || fail "a read command changed the database"

step "export - | import - into a new file"
COPY="$WORK/copy.db"
"$BIN" --db "$DB" export - >"$WORK/export.jsonl" || fail "export"
"$BIN" --db "$DB" export - | "$BIN" --db "$COPY" import - >"$WORK/out" 2>"$WORK/err" ||
  fail "export | import ($(cat "$WORK/err"))"
contains "Imported 42 sessions"
"$BIN" --db "$COPY" export - >"$WORK/again.jsonl" || fail "export of the copy"
cmp -s "$WORK/export.jsonl" "$WORK/again.jsonl" || fail "the copy's export differs from the original's"
[ "$(wc -l <"$WORK/export.jsonl")" -eq 42 ] || fail "expected 42 exported sessions"
run --db "$COPY" import "$WORK/export.jsonl"; contains "skipped 42 already present"

step "import from a pipe: process substitution (a FIFO, not a regular file)"
run --db "$WORK/piped.db" import <(cat "$WORK/export.jsonl"); contains "Imported 42 sessions"

step "show --follow prints what another process writes (Python's sqlite3), and ends on SIGTERM"
FOLLOWED="$WORK/followed.db"
cp "$FIXTURE" "$FOLLOWED"; chmod 600 "$FOLLOWED"
"$BIN" --db "$FOLLOWED" show 20260429_090322_3762ca --follow=0.2 >"$WORK/follow.out" 2>&1 &
FOLLOWER=$!
for _ in $(seq 100); do grep -q "Run B is faster" "$WORK/follow.out" && break; sleep 0.1; done
python3 - "$FOLLOWED" <<'PY' || fail "python3 could not write the followed file"
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
db.execute(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
    ("20260429_090322_3762ca", "written by python while followed", time.time()),
)
db.execute("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?",
           ("20260429_090322_3762ca",))
db.commit()
PY
for _ in $(seq 100); do grep -q "written by python while followed" "$WORK/follow.out" && break; sleep 0.1; done
kill -TERM "$FOLLOWER"
wait "$FOLLOWER" || fail "show --follow exited $? on SIGTERM ($(cat "$WORK/follow.out"))"
grep -q "written by python while followed" "$WORK/follow.out" ||
  fail "show --follow did not print the new message: $(tail -5 "$WORK/follow.out")"

step "export into a closed pipe ends quietly"
"$BIN" --db "$DB" export - 2>"$WORK/err" | head -c 100 >/dev/null || true
[ ! -s "$WORK/err" ] || fail "export into a closed pipe wrote to stderr: $(cat "$WORK/err")"

step "errors: usage (2) and missing database (1)"
set +e
"$BIN" list --bogus >/dev/null 2>&1; [ $? -eq 2 ] || fail "usage error should exit 2"
"$BIN" --db "$WORK/none.db" list >/dev/null 2>&1; [ $? -eq 1 ] || fail "missing database should exit 1"
set -e

step "serve: the page, its embedded assets and the API from the executable"
"$BIN" --db "$DB" serve --port 0 >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVE_PID=$!
for _ in $(seq 100); do grep -q 'Ctrl-C stops' "$WORK/serve.out" && break; sleep 0.1; done
URL="$(sed -n 's/^Open //p' "$WORK/serve.out")"
[ -n "$URL" ] || { kill "$SERVE_PID" 2>/dev/null; fail "serve printed no address ($(cat "$WORK/serve.err"))"; }
bun -e '
  const base = process.argv[1];
  const check = async (path, pattern) => {
    const response = await fetch(base + path);
    const text = await response.text();
    if (response.status !== 200 || !pattern.test(text)) throw new Error(`${path}: ${response.status}`);
  };
  await check("", /<title>hermes-state<\/title>/);
  await check("assets/app.js", /textContent/);
  await check("assets/app.css", /prefers-color-scheme/);
  await check("api/search?q=docker", /"hits":\[\{/);
' "$URL" || { kill "$SERVE_PID" 2>/dev/null; fail "serve did not answer at $URL"; }
step "serve on a port in use: one line naming it, exit 1"
BUSY_PORT="$(printf '%s' "$URL" | sed -E 's#^http://[^/]*:([0-9]+)/.*#\1#')"
set +e
"$BIN" --db "$DB" serve --port "$BUSY_PORT" >/dev/null 2>"$WORK/busy.err"; BUSY=$?
set -e
[ "$BUSY" -eq 1 ] && grep -qF "Cannot listen on 127.0.0.1:$BUSY_PORT: the port is in use" "$WORK/busy.err" ||
  { kill "$SERVE_PID" 2>/dev/null; fail "serve on a busy port exited $BUSY: $(cat "$WORK/busy.err")"; }
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "serve did not stop cleanly on SIGTERM"
! grep -q 'searching on the server' "$WORK/serve.err" || fail "the search workers did not start: $(cat "$WORK/serve.err")"
grep -q '^Stopped\.$' "$WORK/serve.out" || fail "serve did not say it stopped"

step "PostgreSQL from the executable: migrate, copy, search, sync and doctor over the server's Unix socket"
if [ -n "${HERMES_TEST_PG_URL:-}" ]; then
  SOCKET="$(psql "$HERMES_TEST_PG_URL" -Atc "SELECT split_part(current_setting('unix_socket_directories'), ',', 1)")"
  PORT="$(psql "$HERMES_TEST_PG_URL" -Atc "SHOW port")"
  SCHEMA="e2e_$$"
  PG="postgres:///postgres?host=$SOCKET&port=$PORT&user=postgres&schema=$SCHEMA"
  trap 'psql "$HERMES_TEST_PG_URL" -qc "DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; DROP SCHEMA IF EXISTS ${SCHEMA}_sync CASCADE" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
  run --db "$PG" migrate
  run copy "$DB" "$PG"; contains "Copied 42 sessions"
  run --db "$PG" search docker; contains ">>>docker<<<"
  run --db "$PG" search 记忆; contains "记忆断裂排查"
  run sync "$DB" --to "${PG}_sync" --origin e2e; contains "42 new"
  run --db "${PG}_sync" list --origin e2e --json; json_ok "$WORK/out"; contains '"e2e/'
  run --db "${PG}_sync" doctor --json; contains '"healthy": true'; contains '"name": "origins"'
elif [ "${CI:-}" = true ]; then
  fail "CI needs HERMES_TEST_PG_URL (scripts/test.sh starts a server)"
else
  step "(skipped: no HERMES_TEST_PG_URL)"
fi

step "demo"
run demo "$WORK/demo.db"; contains "Demo database:"; contains ">>>docker<<<"

step "doctor, backup, recover on the demo file"
run --db "$WORK/demo.db" doctor --json; contains '"healthy": true'
run --db "$WORK/demo.db" backup "$WORK/demo-backup.db"
run --db "$WORK/demo-backup.db" doctor
run recover "$WORK/demo.db" "$WORK/demo-recovered.db"
run --db "$WORK/demo-recovered.db" search docker; contains "docker"

step "ok"
