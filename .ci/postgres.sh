#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the approval-store tests, from
# Debian's packages, on 127.0.0.1 only, as the unprivileged `postgres` user,
# and prints the URL the tests read (OBJECTSTACK_TEST_POSTGRES_URL).
#
#   eval "$(bash .ci/postgres.sh start)"   # exports the URL
#   bash .ci/postgres.sh stop
#
# The cluster lives in a temporary directory and trusts local connections:
# it is for tests, never for data.
set -euo pipefail
PORT="${OBJECTSTACK_TEST_POSTGRES_PORT:-54329}"
DIR="${OBJECTSTACK_TEST_POSTGRES_DIR:-/tmp/objectstack-test-postgres}"

bin_dir() {
    local found
    found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    [ -n "$found" ] && echo "$found"
}

case "${1:-start}" in
start)
    if [ -z "$(bin_dir)" ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq postgresql >&2
    fi
    BIN="$(bin_dir)"
    id postgres >/dev/null 2>&1 || useradd --system --home-dir "$DIR" postgres
    if [ -f "$DIR/data/postmaster.pid" ]; then
        runuser -u postgres -- "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >&2 || true
    fi
    rm -rf "$DIR"
    install -d -o postgres -g postgres -m 700 "$DIR"
    runuser -u postgres -- "$BIN/initdb" -D "$DIR/data" -U postgres --auth=trust \
        --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    # 127.0.0.1 only, no Unix socket outside the cluster's directory; enough
    # connections for 16 racing workers in two processes and the listeners.
    runuser -u postgres -- "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c max_connections=200 -c fsync=off" \
        start >&2
    echo "export OBJECTSTACK_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$PORT/postgres"
    ;;
stop)
    BIN="$(bin_dir)"
    runuser -u postgres -- "$BIN/pg_ctl" -D "$DIR/data" -m fast stop >&2 || true
    rm -rf "$DIR"
    ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
