#!/usr/bin/env bash
# make bench's Ruby part (bench/ruby/bench.rb): rack-attack's own Redis store against
# GoblinRedis::RackAttackStore, and a scripted lock against GoblinRedis::Lock, on every matrix
# server of scripts/servers.list, written to bench/results/ruby.md. --quick (a tiny run that only
# checks the harness) writes to target/bench-ruby/ruby.md instead.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/ruby.sh
out=bench/results/ruby.md
for arg in "$@"; do
    [ "$arg" = --quick ] && out=target/bench-ruby/ruby.md
done
mkdir -p "$(dirname "$out")"
servers=()
trim() { sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//' <<<"$1"; }
while IFS='|' read -r name label _ _ role _; do
    [[ $name =~ ^[[:space:]]*(#|$) ]] && continue
    [ "$(trim "$role")" = matrix ] || continue
    path=$(cargo run -q --release -p goblin-testkit --bin server-path -- "$(trim "$name")")
    servers+=(--server "$(trim "$label")=$path")
done < scripts/servers.list
exec ruby -I ruby/lib bench/ruby/bench.rb --module "$PWD/target/release/libgoblin.so" "${servers[@]}" \
    --out "$out" "$@"
