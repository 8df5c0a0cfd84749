#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests, developers and users:
#
#   scripts/pg.sh start [DIR]   initdb + pg_ctl start in DIR (a new temporary folder by default),
#                               listening on 127.0.0.1 at a free port and on a unix socket in DIR;
#                               prints the folder on stderr and the URL on stdout
#   scripts/pg.sh url [DIR]     prints the URL of the cluster in DIR
#   scripts/pg.sh crash [DIR]   pg_ctl -m immediate stop (as a power cut would), keeping DIR
#   scripts/pg.sh restart [DIR] starts the cluster in DIR again, on the same port
#   scripts/pg.sh stop [DIR]    pg_ctl -m immediate stop, then removes DIR
#   scripts/pg.sh standby DIR PRIMARY_DIR
#                               a hot standby of the cluster in PRIMARY_DIR (pg_basebackup -R,
#                               streaming from it) in DIR, at a free port; prints its URL
#
# DIR defaults to $HERMES_PG_DIR. When run as root the server runs as the `postgres` user (setpriv);
# `postgresql` and `postgresql-contrib` are installed with apt when missing and we are root (CI).
# Example:  export HERMES_TEST_PG_URL="$(scripts/pg.sh start /tmp/hermes-pg)"; …; scripts/pg.sh stop /tmp/hermes-pg
set -euo pipefail

find_bin() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    [ -x "$dir/initdb" ] && { echo "$dir"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

PG_BIN="$(find_bin || true)"
if [ -z "$PG_BIN" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "pg.sh: installing postgresql with apt" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql postgresql-contrib >&2 ||
    { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql postgresql-contrib >&2; }
  PG_BIN="$(find_bin || true)"
fi
[ -n "$PG_BIN" ] || { echo "pg.sh: PostgreSQL is not installed (initdb not found)" >&2; exit 1; }

# as_owner (the data folder's owner runs the server: postgres refuses root) and free_port.
. "$(dirname "${BASH_SOURCE[0]}")/_service.sh"

url_of() { echo "postgres://postgres@127.0.0.1:$(cat "$1/port")/postgres"; }

cmd="${1:-}"
DIR="${2:-${HERMES_PG_DIR:-}}"
case "$cmd" in
  start)
    if [ -z "$DIR" ]; then DIR="$(mktemp -d "${TMPDIR:-/tmp}/hermes-pg-XXXXXX")"; else mkdir -p "$DIR"; fi
    if [ "$(id -u)" = 0 ]; then
      chown postgres:postgres "$DIR"
      as_owner test -w "$DIR" ||
        { echo "pg.sh: the postgres user cannot reach $DIR (a parent folder is closed to it): use a folder under /tmp" >&2; exit 1; }
    fi
    chmod 700 "$DIR"
    as_owner "$PG_BIN/initdb" -D "$DIR/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
      >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; exit 1; }
    # Every login is trusted except the role the tests of password logins create: it must give
    # its password (first matching line wins, so these go before initdb's trust lines).
    hba="$DIR/data/pg_hba.conf"
    { printf 'local all hermes_password_test scram-sha-256\n'
      printf 'host all hermes_password_test 127.0.0.1/32 scram-sha-256\n'
      cat "$hba"; } >"$hba.new"
    mv "$hba.new" "$hba"
    if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$hba"; fi
    chmod 600 "$hba"
    # TLS with a self-signed certificate, for clients that ask for it (sslmode=require); plain
    # connections still work. Without openssl (and no apt to install it) the server has no TLS.
    if ! command -v openssl >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q openssl >&2 || true
    fi
    if command -v openssl >/dev/null 2>&1; then
      openssl req -x509 -nodes -newkey rsa:2048 -days 7 -subj /CN=localhost \
        -keyout "$DIR/data/server.key" -out "$DIR/data/server.crt" >/dev/null 2>&1
      chmod 600 "$DIR/data/server.key"
      if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$DIR/data/server.key" "$DIR/data/server.crt"; fi
      printf "ssl = on\n" >>"$DIR/data/postgresql.conf"
    fi
    # Another server starting at once may take the same free port first: then try another.
    for attempt in 1 2 3; do
      port="$(free_port)"
      echo "$port" >"$DIR/port"
      as_owner "$PG_BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 30 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $DIR -c fsync=on -c max_connections=200" \
        start >/dev/null 2>&1 && break
      if [ "$attempt" = 3 ] || ! grep -q "Address already in use" "$DIR/server.log"; then
        cat "$DIR/server.log" >&2
        exit 1
      fi
    done
    echo "pg.sh: cluster in $DIR" >&2
    url_of "$DIR"
    ;;
  standby)
    primary="${3:-}"
    [ -n "$DIR" ] && [ -n "$primary" ] && [ -f "$primary/port" ] ||
      { echo "pg.sh: usage: scripts/pg.sh standby DIR PRIMARY_DIR (a cluster pg.sh started)" >&2; exit 2; }
    mkdir -p "$DIR"
    if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$DIR"; fi
    chmod 700 "$DIR"
    as_owner "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$(cat "$primary/port")" -U postgres \
      --checkpoint=fast -D "$DIR/data" -R -X stream >"$DIR/basebackup.log" 2>&1 || { cat "$DIR/basebackup.log" >&2; exit 1; }
    port="$(free_port)"
    echo "$port" >"$DIR/port"
    as_owner "$PG_BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 30 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $DIR -c max_connections=200" start >/dev/null ||
      { cat "$DIR/server.log" >&2; exit 1; }
    url_of "$DIR"
    ;;
  crash)
    [ -n "$DIR" ] && [ -d "$DIR/data" ] || { echo "pg.sh: no cluster in '$DIR'" >&2; exit 1; }
    as_owner "$PG_BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null
    ;;
  restart)
    [ -n "$DIR" ] && [ -f "$DIR/port" ] || { echo "pg.sh: no cluster in '$DIR'" >&2; exit 1; }
    port="$(cat "$DIR/port")"
    as_owner "$PG_BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $DIR -c fsync=on -c max_connections=200" start \
      >/dev/null || { tail -20 "$DIR/server.log" >&2; exit 1; }
    url_of "$DIR"
    ;;
  url)
    [ -n "$DIR" ] && [ -f "$DIR/port" ] || { echo "pg.sh: no cluster in '$DIR'" >&2; exit 1; }
    url_of "$DIR"
    ;;
  stop)
    [ -n "$DIR" ] || { echo "pg.sh: stop needs the cluster folder" >&2; exit 2; }
    if [ -d "$DIR/data" ]; then
      as_owner "$PG_BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
    fi
    rm -rf "$DIR"
    ;;
  *)
    echo "usage: scripts/pg.sh start|url|crash|restart|stop [DIR] | standby DIR PRIMARY_DIR" >&2
    exit 2
    ;;
esac
