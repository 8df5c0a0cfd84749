# Sourced by scripts/pg.sh and scripts/pgbouncer.sh: what both need to run a throwaway server.

# Runs a server binary as the `postgres` user when we are root (neither server runs as root).
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"
  else
    "$@"
  fi
}

# True when something listens on TCP port $1 of 127.0.0.1.
listens() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Prints a TCP port on 127.0.0.1 that nothing listens on, below the kernel's range of ephemeral
# ports: there the local end of any outgoing connection (a test's client) may hold a port that
# nothing listens on, and a server's bind fails ("Address already in use").
free_port() {
  local port low=32768
  [ -r /proc/sys/net/ipv4/ip_local_port_range ] &&
    read -r low _ </proc/sys/net/ipv4/ip_local_port_range
  [ "$low" -gt 11024 ] || low=32768
  for _ in $(seq 1 50); do
    port=$((10000 + RANDOM % (low - 10000)))
    listens "$port" || { echo "$port"; return 0; }
  done
  echo "$(basename "$0"): no free port found" >&2
  return 1
}
