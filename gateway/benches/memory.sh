#!/usr/bin/env bash
# Peak memory of `objectstack-ai serve --transport http`, as docs/performance.md
# reports it: VmHWM (and what is resident then, VmRSS) after start and after
# SESSIONS sessions have each listed
# the tools once, for a stack of ACTIONS actions (the shape of the benches'
# `stack_with`) and for a one-action stack (the process alone). Linux only
# (/proc); needs curl.
#
#   cargo build --release
#   bash gateway/benches/memory.sh target/release/objectstack-ai [ACTIONS] [SESSIONS]
set -euo pipefail
BIN="${1:?usage: memory.sh BIN [ACTIONS] [SESSIONS]}"
ACTIONS="${2:-10000}"
SESSIONS="${3:-3}"
PORT="${PORT:-8799}"
DIR="$(mktemp -d)"
trap 'rm -rf "$DIR"' EXIT

stack() { # stack N FILE
    {
        printf '{"objects": [{"name": "support_ticket", "fields": {}, "actions": ['
        for ((i = 0; i < $1; i++)); do
            ((i > 0)) && printf ', '
            printf '{"name": "do_thing_%d", "label": "Do thing %d", "type": "script", "locations": ["list_toolbar"], "params": [{"name": "note", "label": "Note", "type": "text"}], "body": {"language": "js", "source": "return 1;"}, "ai": {"exposed": true, "description": "Does thing number %d to the tickets, when the user asks for it."}}' "$i" "$i" "$i"
        done
        printf ']}]}\n'
    } >"$2"
}

hwm_kb() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }

post() { # post SESSION BODY
    curl -s -o /dev/null -X POST "http://127.0.0.1:$PORT/mcp" \
        -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
        -H 'authorization: Bearer osk_memory' -H 'mcp-protocol-version: 2025-11-25' \
        ${1:+-H "mcp-session-id: $1"} -d "$2"
}

measure() { # measure STACK -> "after-start-kB after-listing-kB"
    "$BIN" serve --stack "$1" --server http://127.0.0.1:9 --transport http \
        --listen "127.0.0.1:$PORT" --approvals "$DIR/q.sqlite" --audit /dev/null 2>"$DIR/serve.err" &
    local pid=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
    local started started_rss
    started=$(hwm_kb $pid)
    started_rss=$(rss_kb $pid)
    for _ in $(seq "$SESSIONS"); do
        local sid
        sid=$(curl -s -D - -o /dev/null -X POST "http://127.0.0.1:$PORT/mcp" \
            -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
            -H 'authorization: Bearer osk_memory' \
            -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"memory","version":"0"}}}' |
            awk 'tolower($1) == "mcp-session-id:" {print $2}' | tr -d '\r')
        post "$sid" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
        post "$sid" '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
    done
    echo "$started $(hwm_kb $pid) $started_rss $(rss_kb $pid)"
    kill $pid
    wait $pid 2>/dev/null || true
    rm -f "$DIR"/q.sqlite*
}

stack "$ACTIONS" "$DIR/stack.json"
stack 1 "$DIR/one.json"
read -r big_start big_list big_start_rss big_list_rss < <(measure "$DIR/stack.json")
read -r one_start one_list one_start_rss one_list_rss < <(measure "$DIR/one.json")
bytes=$(stat -c %s "$DIR/stack.json")
awk -v b="$bytes" -v bs="$big_start" -v bl="$big_list" -v os="$one_start" -v ol="$one_list" \
    -v bsr="$big_start_rss" -v blr="$big_list_rss" -v osr="$one_start_rss" -v olr="$one_list_rss" \
    -v n="$ACTIONS" -v s="$SESSIONS" 'BEGIN {
    mib = 1024
    printf "stack: %d actions, %.2f MiB\n", n, b / 1048576
    printf "after start:            %6.1f MiB (one action: %.1f MiB)\n", bs / mib, os / mib
    printf "after %d listing(s):     %6.1f MiB (one action: %.1f MiB)\n", s, bl / mib, ol / mib
    printf "what the stack costs:   %.1fx the file after start, %.1fx after listing\n",
        (bs - os) * 1024 / b, (bl - ol) * 1024 / b
    printf "resident now (VmRSS):   %.1fx the file after start, %.1fx after listing\n",
        (bsr - osr) * 1024 / b, (blr - olr) * 1024 / b
}'
