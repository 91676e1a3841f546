#!/usr/bin/env bash
# make bench's PHP part: each library's own Redis store (Laravel's throttle, funnel and cache
# lock; Symfony's Lock and RateLimiter) against goblin-redis's, on every matrix server of
# scripts/servers.list (bench/php/bench.php, to bench/results/php.md). --quick (a tiny run that
# only checks the harness) writes to target/bench-php instead.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/php.sh
out=bench/results
for arg in "$@"; do
    [ "$arg" = --quick ] && out=target/bench-php
done
mkdir -p "$out"
# The matrix servers of scripts/servers.list (name|label|...|role|...), each as "Label=binary".
servers=()
while IFS='|' read -r name label; do
    path=$(cargo run -q --release -p goblin-testkit --bin server-path -- "$name")
    servers+=(--server "$label=$path")
done < <(awk -F'|' '!/^[[:space:]]*(#|$)/ {
    for (i = 1; i <= NF; i++) gsub(/^[ \t]+|[ \t]+$/, "", $i)
    if ($5 == "matrix") print $1 "|" $2
}' scripts/servers.list)
php bench/php/bench.php --module "$PWD/target/release/libgoblin.so" "${servers[@]}" --out "$out/php.md" "$@"
