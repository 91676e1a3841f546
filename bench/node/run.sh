#!/usr/bin/env bash
# make bench's Node part: each rate-limiting library's own Redis store against goblin-redis's, on
# every matrix server of scripts/servers.list (bench/node/limits.mjs, to bench/results/node.md),
# then the locks' hand-off latency (bench/node/locks.mjs: goblin-redis's Mutex against
# redis-semaphore's and redlock's) on Valkey 9.1 (to bench/results/node-locks.md). --quick (a
# tiny run that only checks the harness) goes to both, and writes to target/bench-node instead.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/node.sh
out=bench/results
for arg in "$@"; do
    [ "$arg" = --quick ] && out=target/bench-node
done
mkdir -p "$out"
# The matrix servers of scripts/servers.list (name|label|...|role|...), each as "Label=binary".
servers=()
first_server=
while IFS='|' read -r name label; do
    path=$(cargo run -q --release -p goblin-testkit --bin server-path -- "$name")
    servers+=(--server "$label=$path")
    [ "$name" = valkey91 ] && first_server="$label=$path"
done < <(awk -F'|' '!/^[[:space:]]*(#|$)/ {
    for (i = 1; i <= NF; i++) gsub(/^[ \t]+|[ \t]+$/, "", $i)
    if ($5 == "matrix") print $1 "|" $2
}' scripts/servers.list)
module="$PWD/target/release/libgoblin.so"
node bench/node/limits.mjs --module "$module" "${servers[@]}" --out "$out/node.md" "$@"
node bench/node/locks.mjs --module "$module" --server "$first_server" --out "$out/node-locks.md" "$@"
echo "bench/node: $out/node.md and $out/node-locks.md"
