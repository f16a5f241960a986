#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the approval-store tests, from
# Debian's packages, on 127.0.0.1 only, as the unprivileged `postgres` user,
# and prints the URL the tests read (OBJECTSTACK_TEST_POSTGRES_URL).
#
#   eval "$(bash .ci/postgres.sh start)"   # exports the URL
#   bash .ci/postgres.sh stop
#
# The cluster lives in a temporary directory, trusts local connections and
# offers TLS with a throwaway CA: it is for tests, never for data.
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
    # TLS on, with a server certificate for 127.0.0.1 signed by a CA made
    # for this cluster (its PEM is OBJECTSTACK_TEST_POSTGRES_CA), so the
    # sslmode tests have a real handshake to check.
    if ! command -v openssl >/dev/null; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq openssl >&2
    fi
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=objectstack test CA" \
        -keyout "$DIR/ca.key" -out "$DIR/ca.pem" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign >/dev/null 2>&1
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
        -keyout "$DIR/data/server.key" -out "$DIR/server.csr" >/dev/null 2>&1
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
        > "$DIR/server.ext"
    openssl x509 -req -in "$DIR/server.csr" -CA "$DIR/ca.pem" -CAkey "$DIR/ca.key" \
        -CAcreateserial -days 2 -extfile "$DIR/server.ext" -out "$DIR/data/server.crt" >/dev/null 2>&1
    chown postgres:postgres "$DIR/data/server.key" "$DIR/data/server.crt"
    chmod 600 "$DIR/data/server.key"
    chmod 644 "$DIR/ca.pem"
    # 127.0.0.1 only, no Unix socket outside the cluster's directory; enough
    # connections for 16 racing workers in two processes and the listeners.
    runuser -u postgres -- "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c max_connections=200 -c fsync=off -c ssl=on" \
        start >&2
    echo "export OBJECTSTACK_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$PORT/postgres"
    echo "export OBJECTSTACK_TEST_POSTGRES_CA=$DIR/ca.pem"
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
