#!/usr/bin/env bash
# Run a command with a throwaway PostgreSQL cluster and redis-server on free loopback ports.
#   scripts/with_services.sh CMD [ARGS...]
# Exports DATABASE_URL, REDIS_URL and the services' control details (SERVICES_DIR, PG_BIN,
# PGDATA, PG_PORT, REDIS_PORT, REDIS_CONF) for tests that stop and restart them.
# Everything is stopped and removed on exit, also on failure or Ctrl-C.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bash "$here/ensure_system_packages.sh"

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
SERVICES_DIR=$(mktemp -d /tmp/fabric-services.XXXXXX)
chmod 755 "$SERVICES_DIR"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
PG_PORT=$(free_port)
REDIS_PORT=$(free_port)
PGDATA="$SERVICES_DIR/pgdata"

# PostgreSQL refuses to run as root: run it as the postgres user (or the current user).
as_pg() {
  if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
if [ "$(id -u)" = "0" ]; then chown postgres "$SERVICES_DIR"; fi

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  local redis_pid=""
  if [ -f "$SERVICES_DIR/redis.pid" ]; then redis_pid=$(cat "$SERVICES_DIR/redis.pid"); fi
  if [ -n "$redis_pid" ]; then kill "$redis_pid" 2>/dev/null || true; fi
  if [ -f "$PGDATA/postmaster.pid" ]; then as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" -m immediate stop >/dev/null 2>&1 || true; fi
  # redis-server writes its last log line as it exits: wait for it (up to 5 s) before removing
  # its directory, or rm races the write and fails with "Directory not empty".
  if [ -n "$redis_pid" ]; then
    for _ in $(seq 50); do kill -0 "$redis_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$SERVICES_DIR" 2>/dev/null || { sleep 1; rm -rf "$SERVICES_DIR" || true; }
  exit $rc
}
trap cleanup EXIT INT TERM

as_pg "$PG_BIN/initdb" -D "$PGDATA" -U postgres -A trust --no-sync -E UTF8 >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" -l "$SERVICES_DIR/postgres.log" -w \
  -o "-p $PG_PORT -k $SERVICES_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null
as_pg "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres fabric

REDIS_CONF="$SERVICES_DIR/redis.conf"
cat > "$REDIS_CONF" <<CONF
port $REDIS_PORT
bind 127.0.0.1
daemonize yes
pidfile $SERVICES_DIR/redis.pid
dir $SERVICES_DIR
logfile $SERVICES_DIR/redis.log
save ""
appendonly yes
appendfsync always
CONF
redis-server "$REDIS_CONF"
for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

export DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_PORT/fabric"
export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
export SERVICES_DIR PG_BIN PGDATA PG_PORT REDIS_PORT REDIS_CONF
echo "services: PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT, $(redis-server --version | awk '{print $1, $2, $3}') on 127.0.0.1:$REDIS_PORT"
"$@"
