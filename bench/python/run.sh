#!/usr/bin/env bash
# make bench's Python part (bench/python/bench.py): goblin:// beneath limits against limits' own
# Redis storage, on every matrix server of scripts/servers.list (limits' own benchmarks on the
# first, Valkey 9.1), written to bench/results/python.md. Arguments go to bench.py (--quick: a
# tiny run that only checks the harness).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/python.sh venv-limits limits-sdist
servers=()
first=valkey91
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
    else
        servers+=(--server "$label=$path")
    fi
done < scripts/servers.list
exec .servers/venv-limits/bin/python bench/python/bench.py --module "$PWD/target/release/libgoblin.so" "${servers[@]}" "$@"
