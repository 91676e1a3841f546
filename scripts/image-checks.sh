#!/usr/bin/env bash
# The checks `make image-test` runs INSIDE the Goblin container (scripts/image-test.sh pipes this
# file into `docker exec -i <container> bash -s -- PHASE TOKEN`). The container has no network
# (--network none) and the image no valkey-cli (the local Valkey stand-in has none; the
# official image has one, but these checks must not depend on it), so this talks RESP to the
# server over loopback with bash's /dev/tcp. Only bash and coreutils from the image are used.
#
#   PHASE first    a fresh container on an empty volume: the module, the commands, the user,
#                  the config; then a write that must survive
#   PHASE restart  the same container after `docker restart`
#   PHASE fresh    a new container from the image on the same volume
# Prints one line per check and exits with the number of failed checks.
set -uo pipefail
export LC_ALL=C
phase=${1:?phase}
token=${2:?token}
failed=0

ok() { printf '  ok    %s\n' "$*"; }
fail() {
    printf '  FAIL  %s\n' "$*"
    failed=$((failed + 1))
}
# check WHAT EXPECTED ACTUAL
check() {
    if [ "$3" = "$2" ]; then ok "$1: $3"; else fail "$1: expected '$2', got '$3'"; fi
}

# One RESP reply from fd 3 into REPLY_TEXT: simple strings and integers as they are, errors as
# "(error) ...", bulk strings as their bytes, nil as "(nil)", arrays as "[a b c]".
resp_read() {
    local line n i
    local -a parts=()
    IFS= read -r line <&3 || { REPLY_TEXT='(connection closed)'; return 1; }
    line=${line%$'\r'}
    case $line in
        [+:]*) REPLY_TEXT=${line:1} ;;
        -*) REPLY_TEXT="(error) ${line:1}" ;;
        '$-1' | '*-1') REPLY_TEXT='(nil)' ;;
        \$*)
            IFS= read -r -N "${line:1}" REPLY_TEXT <&3
            IFS= read -r line <&3
            ;;
        \**)
            n=${line:1}
            for ((i = 0; i < n; i++)); do
                resp_read || return 1
                parts+=("$REPLY_TEXT")
            done
            local IFS=' '
            REPLY_TEXT="[${parts[*]}]"
            ;;
        *) REPLY_TEXT="(unexpected: $line)" ;;
    esac
}
# call ARG... : sends one command, prints its reply as resp_read renders it.
call() {
    local request="*$#"$'\r\n' arg
    for arg; do request+="\$${#arg}"$'\r\n'"$arg"$'\r\n'; done
    printf '%s' "$request" >&3
    resp_read
    printf '%s' "$REPLY_TEXT"
}
connect() { exec 3<>/dev/tcp/127.0.0.1/6379; } 2>/dev/null

# The server may still be loading its AOF: wait up to 30 s for PONG.
for _ in $(seq 1 60); do
    if connect && [ "$(call PING)" = PONG ]; then break; fi
    exec 3>&-
    sleep 0.5
done
check "PING" PONG "$(call PING)"

# INFO server's field $1.
info_server() { call INFO server | tr -d '\r' | sed -n "s/^$1://p"; }

pid=$(info_server process_id)
uid=$(awk '/^Uid:/ { print $2 "/" $3 "/" $4 "/" $5 }' "/proc/$pid/status")
user=$(awk -F: -v uid="${uid%%/*}" '$3 == uid { print $1 }' /etc/passwd)
check "the server (pid $pid) runs as user valkey (real/effective/saved/fs uid)" \
    "valkey 999/999/999/999" "$user $uid"
check "the server's config file" /usr/local/etc/valkey/goblin.conf "$(info_server config_file)"

case $phase in
    first)
        modules=$(call MODULE LIST)
        case $modules in
            *"name goblin "*"path /usr/local/lib/valkey/libgoblin.so "*) ok "MODULE LIST: $modules" ;;
            *) fail "MODULE LIST has no goblin loaded from /usr/local/lib/valkey/libgoblin.so: $modules" ;;
        esac
        check "CONFIG GET dir" "[dir /data]" "$(call CONFIG GET dir)"
        check "CONFIG GET appendonly" "[appendonly yes]" "$(call CONFIG GET appendonly)"
        check "GOBLIN.ZWINDOW rl:user42 1000 10 3 req-a" 1 "$(call GOBLIN.ZWINDOW rl:user42 1000 10 3 req-a)"
        check "GOBLIN.ZWINDOW rl:user42 1001 10 3 req-a (a refresh)" 1 "$(call GOBLIN.ZWINDOW rl:user42 1001 10 3 req-a)"
        check "GOBLIN.GCRA api:user42 4 1 2 (allowed, quota 5, 4 left, no retry, full in 2 s)" \
            "[0 5 4 -1 2]" "$(call GOBLIN.GCRA api:user42 4 1 2)"
        check "GOBLIN.INCREX image-test:hits 3600 (the write that must survive)" 1 \
            "$(call GOBLIN.INCREX image-test:hits 3600)"
        check "SET image-test:token $token" OK "$(call SET image-test:token "$token")"
        ;;
    restart | fresh)
        if [ "$phase" = restart ]; then
            written="before the restart"
            expected=2
        else
            written="by the first container"
            expected=3
        fi
        check "GET image-test:token (written $written)" "$token" "$(call GET image-test:token)"
        check "GOBLIN.INCREX image-test:hits 3600 (its count kept)" "$expected" \
            "$(call GOBLIN.INCREX image-test:hits 3600)"
        ttl=$(call TTL image-test:hits)
        if [ "$ttl" -gt 0 ] 2>/dev/null && [ "$ttl" -le 3600 ]; then
            ok "TTL image-test:hits (its window kept): $ttl"
        else
            fail "TTL image-test:hits: expected 1..3600, got $ttl"
        fi
        ;;
    *)
        fail "unknown phase $phase"
        ;;
esac

# The AOF is in /data, owned by valkey.
owners=$(find /data/appendonlydir -type f -printf '%u\n' 2>/dev/null | sort -u | paste -sd ' ')
check "owner of the AOF files in /data/appendonlydir" valkey "$owners"
exit "$failed"
