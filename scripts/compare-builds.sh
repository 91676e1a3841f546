#!/usr/bin/env bash
# Two builds of the module side by side: the working tree's against REV's.
#
#   scripts/compare-builds.sh REV [SERVER] [ROUNDS]        throughput (redis-benchmark)
#   scripts/compare-builds.sh --instructions REV [SERVER]  instructions per call (callgrind),
#                                                         and bench/results/builds.md
#
# SERVER is redis82 by default. REV is built once in a worktree under target/compare/ (ignored,
# never committed).
#
# Throughput: both modules run in servers of the same binary, started together; redis-benchmark
# drives them in turn, round after round (old, new, new, old, ...), so a slow patch of the
# machine hits both. Printed: each command's median requests per second for each build, and
# new / old. On a shared 2-core machine this swings by 10% and more from run to run.
#
# Instructions: each build's server runs under callgrind while redis-cli --pipe sends the same
# fixed workload (first hits, later hits, admissions, rejections, releases); printed is what
# the server's module dispatcher costs per call, module and server API included. It is exact
# and repeatable, which throughput here is not.
set -euo pipefail

mode=throughput
if [ "${1:-}" = --instructions ]; then mode=instructions; shift; fi
rev=${1:?usage: scripts/compare-builds.sh [--instructions] REV [SERVER] [ROUNDS]}
server=${2:-redis82}
rounds=${3:-6}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

tree="$root/target/compare/$(git rev-parse --short "$rev")"
if [ ! -f "$tree/target/release/libgoblin.so" ]; then
    rm -rf "$tree"
    git worktree prune
    git worktree add --detach "$tree" "$rev" >/dev/null
    ln -sfn "$root/.servers" "$tree/.servers"
    (cd "$tree" && CARGO_TARGET_DIR="$tree/target" cargo build --release -q)
fi
cargo build --release -q
old_module="$tree/target/release/libgoblin.so"
new_module="$root/target/release/libgoblin.so"
binary=$(cargo run -q --release -p goblin-testkit --bin server-path -- "$server")
bench=$(command -v redis-benchmark) || { echo "redis-benchmark not found (Debian: redis-tools)"; exit 1; }
cli=$(command -v redis-cli) || { echo "redis-cli not found (Debian: redis-tools)"; exit 1; }

if [ $mode = instructions ]; then
    command -v valgrind >/dev/null || { echo "valgrind not found (Debian: valgrind)"; exit 1; }
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    # One workload per command, in the RESP protocol: 10,000 keys, five passes each.
    resp() { awk '{printf "*%d\r\n", NF; for (i = 1; i <= NF; i++) printf "$%d\r\n%s\r\n", length($i), $i}'; }
    calls=50000
    awk -v n=$calls 'BEGIN {for (i = 0; i < n; i++) print "GOBLIN.INCREX c:" i % 10000 " 60"}' | resp > "$work/GOBLIN.INCREX"
    awk -v n=$calls 'BEGIN {for (i = 0; i < n; i++) print "GOBLIN.ZWINDOW w:" i % 10000 " " 1000000 + 2000 * int(i / 10000) " 3000 2 m" int(i / 10000)}' | resp > "$work/GOBLIN.ZWINDOW"
    awk -v n=$calls 'BEGIN {for (i = 0; i < n; i++) print "GOBLIN.CAD c:" i % 10000 " " (i < 10000 ? "1" : "x")}' | resp > "$work/GOBLIN.CAD"
    awk -v n=$calls 'BEGIN {for (i = 0; i < n; i++) print "GOBLIN.GCRA g:" i % 10000 " 1000000 1000000 1"}' | resp > "$work/GOBLIN.GCRA"
    # The INCREX stand-in, on a server without the native command (Redis's limiter).
    awk -v n=$calls 'BEGIN {for (i = 0; i < n; i++) print "INCREX x:" i % 10000 " BYINT 1 UBOUND 100 EX 60 ENX"}' | resp > "$work/INCREX"
    cost() { # module workload -> instructions per call in RedisModuleCommandDispatcher
        local out="$work/callgrind.$RANDOM" port=27631
        valgrind --tool=callgrind --callgrind-out-file="$out" "$binary" --port $port \
            --bind 127.0.0.1 --save "" --appendonly no --dir "$work" --loadmodule "$1" \
            > "$work/valgrind.log" 2>&1 &
        local pid=$!
        for _ in $(seq 300); do
            [ "$("$cli" -p $port PING 2>/dev/null)" = PONG ] && break
            sleep 0.2
        done
        # The counters exist for GOBLIN.CAD to release; ZWINDOW's sets fill, then evict (its
        # time unit is the millisecond, so no key expires while callgrind slows the server).
        if [ "$2" != load ]; then
            "$cli" -p $port --pipe < "$work/GOBLIN.INCREX" > /dev/null
            [ "$2" = GOBLIN.INCREX ] || "$cli" -p $port --pipe < "$work/$2" > /dev/null
        fi
        "$cli" -p $port SHUTDOWN NOSAVE > /dev/null 2>&1 || true
        wait $pid || true
        # The dispatcher's inclusive cost (the module and the server API it calls), and the
        # module's own instructions (its functions' self cost).
        callgrind_annotate --inclusive=yes "$out" 2>/dev/null |
            awk '/module.c:RedisModuleCommandDispatcher / {gsub(",", "", $1); printf "%s ", $1; exit}'
        callgrind_annotate --threshold=100 "$out" 2>/dev/null |
            awk '/libgoblin.so\]/ {gsub(",", "", $1); s += $1} END {print s + 0}'
    }
    # Against the natives: the whole of the server's call() per command (the command, its
    # keyspace work, its propagation), on Redis 8.10 built with GCRA, which has GCRA and INCREX
    # of its own; the INCREX stand-in on Redis 8.2, which lacks INCREX. 20,000 calls over 1,000
    # keys, every call allowed. Written as markdown to bench/results/builds.md.
    percall() { # binary module "COMMAND with KEY" -> call()'s instructions per call
        local out="$work/callgrind.$RANDOM" port=27632 n=20000
        awk -v n=$n -v t="$3" 'BEGIN {for (i = 0; i < n; i++) {s = t; gsub("KEY", "k:" i % 1000, s); print s}}' |
            resp > "$work/percall"
        valgrind --tool=callgrind --callgrind-out-file="$out" "$1" --port $port --bind 127.0.0.1 \
            --save "" --appendonly no --dir "$work" --loadmodule "$2" > "$work/valgrind.log" 2>&1 &
        local pid=$!
        for _ in $(seq 300); do
            [ "$("$cli" -p $port PING 2>/dev/null)" = PONG ] && break
            sleep 0.2
        done
        "$cli" -p $port --pipe < "$work/percall" > /dev/null
        "$cli" -p $port SHUTDOWN NOSAVE > /dev/null 2>&1 || true
        wait $pid || true
        callgrind_annotate --inclusive=yes "$out" 2>/dev/null |
            awk -v n=$n '/server\.c:call / {gsub(",", "", $1); found = $1} END {printf "%.0f\n", found / n}'
    }
    gcra_build=$(cargo run -q --release -p goblin-testkit --bin server-path -- redis810-gcra)
    redis82=$(cargo run -q --release -p goblin-testkit --bin server-path -- redis82)
    table="$root/bench/results/builds.md"
    # The natives beside each build: a loaded module's keyspace-event subscription costs the
    # server's own commands too.
    native() { # "command" -> "before now"
        echo "$(percall "$gcra_build" "$old_module" "$1") $(percall "$gcra_build" "$new_module" "$1")"
    }
    read -r gcra_old gcra_new <<< "$(native "GCRA KEY 1000000 1000000 1")"
    read -r increx_old increx_new <<< "$(native "INCREX KEY BYINT 1 EX 60 ENX")"
    row() { # label binary "command" native-before native-now [old-too]
        local new old=""
        new=$(percall "$2" "$new_module" "$3")
        [ "${6:-}" = old ] && old=$(percall "$2" "$old_module" "$3")
        awk -v label="$1" -v o="$old" -v n="$new" -v bo="$4" -v bn="$5" 'BEGIN {
            printf "| %s | %s | %d (%.2fx) |\n", label, (o == "" ? "-" : sprintf("%d (%.2fx)", o, o / bo)), n, n / bn}'
    }
    {
        echo "# Instructions per call, against the native commands"
        echo
        echo "Written by \`scripts/compare-builds.sh --instructions $rev\` on $(date -u +%Y-%m-%d): the"
        echo "whole of the server's \`call()\` per command under callgrind (the command, its keyspace"
        echo "work and its propagation), 20,000 calls over 1,000 keys, every call allowed. Exact and"
        echo "repeatable, unlike throughput on this machine. \"before\" is $rev ($(git rev-parse --short "$rev")),"
        echo "\"now\" the working tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src core || echo ', modified'))."
        echo
        echo "| command | before (/ native) | now (/ native) |"
        echo "|---|---|---|"
        echo "| \`GCRA k 1000000 1000000 1\` (Redis's own, in Redis 8.10 built with it) | $gcra_old | $gcra_new |"
        row "\`GOBLIN.GCRA k 1000000 1000000 1\`" "$gcra_build" "GOBLIN.GCRA KEY 1000000 1000000 1" "$gcra_old" "$gcra_new" old
        row "\`GOBLIN.MGCRA 1 k 1000000 1000000 1\`" "$gcra_build" "GOBLIN.MGCRA 1 KEY 1000000 1000000 1" "$gcra_old" "$gcra_new" \
            "$(git cat-file -e "$rev:src/commands/mgcra.rs" 2>/dev/null && echo old)"
        echo "| \`INCREX k BYINT 1 EX 60 ENX\` (Redis 8.10's own) | $increx_old | $increx_new |"
        row "\`GOBLIN.INCREX k 60\`" "$gcra_build" "GOBLIN.INCREX KEY 60" "$increx_old" "$increx_new" old
        row "the INCREX stand-in, the same call, on Redis 8.2" "$redis82" "INCREX KEY BYINT 1 EX 60 ENX" "$increx_old" "$increx_new" old
        row "\`GOBLIN.ZWINDOW k * 60 100 m\` (against INCREX)" "$gcra_build" "GOBLIN.ZWINDOW KEY * 60 100 m" "$increx_old" "$increx_new" old
    } > "$table.tmp"
    mv "$table.tmp" "$table"
    cat "$table"
    echo

    echo "$server: $rev against the working tree, instructions per call under callgrind"
    echo "(dispatched: the module and the server API it calls; own: the module's code alone)"
    printf '%-16s %14s %14s %8s %10s %10s %8s\n' command "dispatched old" "dispatched new" new/old \
        "own old" "own new" new/old
    load_old=$(cost "$old_module" load) load_new=$(cost "$new_module" load)
    base_old=$(cost "$old_module" GOBLIN.INCREX) base_new=$(cost "$new_module" GOBLIN.INCREX)
    for name in GOBLIN.INCREX GOBLIN.ZWINDOW GOBLIN.CAD GOBLIN.GCRA INCREX; do
        if [ $name = GOBLIN.INCREX ]; then o=$base_old n=$base_new; else
            o=$(cost "$old_module" $name) n=$(cost "$new_module" $name)
        fi
        # What a run costs less what came before the workload: the load alone for INCREX's,
        # the load and INCREX's workload for the others.
        [ $name = GOBLIN.INCREX ] && b_o=$load_old b_n=$load_new || b_o=$base_old b_n=$base_new
        echo "$o $n $b_o $b_n" | awk -v name=$name -v c=$calls '{
            printf "%-16s %14.0f %14.0f %8.3f %10.0f %10.0f %8.3f\n", name,
                ($1 - $5) / c, ($3 - $7) / c, ($3 - $7) / ($1 - $5),
                ($2 - $6) / c, ($4 - $8) / c, ($4 - $8) / ($2 - $6)}'
    done
    exit 0
fi

work=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
start() { # port module
    mkdir -p "$work/$1"
    "$binary" --port "$1" --bind 127.0.0.1 --save "" --appendonly no --dir "$work/$1" \
        --logfile server.log --loadmodule "$2" &
    pids+=($!)
    for _ in $(seq 100); do
        [ "$("$cli" -p "$1" PING 2>/dev/null)" = PONG ] && return
        sleep 0.1
    done
    echo "the server on port $1 did not start"; exit 1
}
old_port=27611 new_port=27612
start $old_port "$old_module"
start $new_port "$new_module"

# name | command: fixed keys and arguments on a keyspace of 10,000 (-r), pipelined.
commands=(
    "GOBLIN.INCREX|GOBLIN.INCREX c:__rand_int__ 60"
    "GOBLIN.ZWINDOW|GOBLIN.ZWINDOW w:__rand_int__ 1000 10 5 m:__rand_int__"
    "GOBLIN.CAD|GOBLIN.CAD l:__rand_int__ token"
)
rps() { # port command...
    "$bench" -p "$1" -n 200000 -c 20 -P 16 -r 10000 --csv "${@:2}" | tail -1 | cut -d, -f2 | tr -d '"'
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "$server: $rev ($old_module) against the working tree, $rounds rounds"
printf '%-16s %12s %12s %8s\n' command old new new/old
for entry in "${commands[@]}"; do
    name=${entry%%|*}
    read -r -a command <<< "${entry#*|}"
    : > "$work/old" ; : > "$work/new"
    for round in $(seq "$rounds"); do
        if (( round % 2 )); then order="old new"; else order="new old"; fi
        for which in $order; do
            port=$old_port; [ "$which" = new ] && port=$new_port
            rps $port "${command[@]}" >> "$work/$which"
        done
    done
    old=$(median < "$work/old") new=$(median < "$work/new")
    printf '%-16s %12.0f %12.0f %8.3f\n' "$name" "$old" "$new" "$(awk -v n="$new" -v o="$old" 'BEGIN {print n / o}')"
done
