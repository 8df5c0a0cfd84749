#!/usr/bin/env bash
# A throwaway PgBouncer in transaction mode in front of a server, for the tests of
# `?pgbouncer=true` and for developers trying the store behind a pooler:
#
#   scripts/pgbouncer.sh start DIR SERVER_URL   starts PgBouncer on 127.0.0.1 at a free port, its
#                                               files in DIR; prints its URL (user postgres,
#                                               database postgres) on stdout
#   scripts/pgbouncer.sh stop DIR               stops it and removes DIR
#
# SERVER_URL is what scripts/pg.sh start prints. Logins are trusted (the server's are too) for the
# roles `postgres` and `hermes_pooled`; database `postgres` has 3 server connections, `hermes_one`
# (the same database) only one. `pgbouncer` is installed with apt when missing and we are root.
set -euo pipefail

cmd="${1:-}"
DIR="${2:-}"
[ -n "$DIR" ] || { echo "usage: scripts/pgbouncer.sh start DIR SERVER_URL | stop DIR" >&2; exit 2; }
# as_owner (PgBouncer refuses root too), free_port and listens.
. "$(dirname "${BASH_SOURCE[0]}")/_service.sh"
case "$cmd" in
  start)
    server="${3:-}"
    [[ "$server" =~ ^postgres(ql)?://([^@/]*@)?([^:/?]+):([0-9]+) ]] ||
      { echo "pgbouncer.sh: SERVER_URL must be postgres://[user@]host:port[/db]: current value is '$server'" >&2; exit 2; }
    host="${BASH_REMATCH[3]}" server_port="${BASH_REMATCH[4]}"
    bin="$(command -v pgbouncer || echo /usr/sbin/pgbouncer)"
    if [ ! -x "$bin" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "pgbouncer.sh: installing pgbouncer with apt" >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q pgbouncer >&2 ||
        { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q pgbouncer >&2; }
    fi
    [ -x "$bin" ] || { echo "pgbouncer.sh: PgBouncer is not installed" >&2; exit 1; }
    mkdir -p "$DIR"
    port="$(free_port)"
    cat >"$DIR/pgbouncer.ini" <<INI
[databases]
postgres = host=$host port=$server_port dbname=postgres pool_size=3
hermes_one = host=$host port=$server_port dbname=postgres pool_size=1
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $DIR/users.txt
pool_mode = transaction
max_client_conn = 500
logfile = $DIR/pgbouncer.log
pidfile = $DIR/pgbouncer.pid
INI
    printf '"postgres" ""\n"hermes_pooled" ""\n' >"$DIR/users.txt"
    if [ "$(id -u)" = 0 ]; then chown -R postgres:postgres "$DIR"; fi
    as_owner "$bin" -d "$DIR/pgbouncer.ini" || { cat "$DIR/pgbouncer.log" >&2 2>/dev/null; exit 1; }
    for _ in $(seq 1 50); do
      listens "$port" && break
      sleep 0.1
    done
    echo "pgbouncer.sh: PgBouncer in $DIR" >&2
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    if [ -f "$DIR/pgbouncer.pid" ]; then kill "$(cat "$DIR/pgbouncer.pid")" 2>/dev/null || true; fi
    rm -rf "$DIR"
    ;;
  *)
    echo "usage: scripts/pgbouncer.sh start DIR SERVER_URL | stop DIR" >&2
    exit 2
    ;;
esac
