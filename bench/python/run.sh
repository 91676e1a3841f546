#!/usr/bin/env bash
# make bench's Python part (bench/python/bench.py): goblin:// beneath limits against limits' own
# Redis storage, on every matrix server of scripts/servers.list (limits' own benchmarks on the
# first, Valkey 9.1), written to bench/results/python.md; then the locks' hand-off latency
# (bench/python/locks.py: goblin_redis.lock.Lock against redis-py's Lock) on Valkey 9.1, written
# to bench/results/locks.md. Arguments go to bench.py, and --quick (a tiny run that only checks
# the harness) to both.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/python.sh venv-limits limits-sdist venv-locks
servers=()
first=valkey91
first_server=
trim() { sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//' <<<"$1"; }
while IFS='|' read -r name label _ _ role _; do
    [[ $name =~ ^[[:space:]]*(#|$) ]] && continue
    name=$(trim "$name")
    label=$(trim "$label")
    role=$(trim "$role")
    [ "$role" = matrix ] || continue
    path=$(cargo run -q --release -p goblin-testkit --bin server-path -- "$name")
    if [ "$name" = "$first" ]; then
        servers=(--server "$label=$path" "${servers[@]}")
        first_server="$label=$path"
    else
        servers+=(--server "$label=$path")
    fi
done < scripts/servers.list
.servers/venv-limits/bin/python bench/python/bench.py --module "$PWD/target/release/libgoblin.so" "${servers[@]}" "$@"
locks_args=()
for arg in "$@"; do
    [ "$arg" = --quick ] && locks_args+=(--quick)
done
exec .servers/venv-locks/bin/python bench/python/locks.py --module "$PWD/target/release/libgoblin.so" \
    --server "$first_server" "${locks_args[@]}"
