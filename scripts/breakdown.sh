#!/usr/bin/env bash
# Where each row's instructions go, Goblin against its floor (docs/benchmark.md, "Where the
# instructions go"): the instructions driver's workloads counted again under callgrind with
# Goblin built with line tables (into target/profile: the same code, and each instruction's
# source file known, inlined code included), each dump kept, then read by scripts/breakdown.py
# into bench/results/breakdown.md.
#
#   scripts/breakdown.sh [--servers redis70,redis82,valkey91,redis810] [--rows GOBLIN.GCRA,...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
for tool in valgrind callgrind_control callgrind_annotate python3; do
    command -v $tool >/dev/null || { echo "$tool not found (Debian: apt-get install valgrind python3)"; exit 1; }
done
CARGO_PROFILE_RELEASE_DEBUG=line-tables-only cargo build --release -q --target-dir target/profile
cargo build --release -q --manifest-path bench/floor/Cargo.toml --target-dir target/floor
cargo build --release -q -p goblin-bench --bin instructions
dumps=target/profile/dumps
rm -rf "$dumps"
target/release/instructions --floor target/floor/release/libgoblin_floor.so \
    --module target/profile/release/libgoblin.so --profile "$dumps" \
    --no-check --no-throughput --out target/profile/instructions.md "$@"
python3 scripts/breakdown.py "$dumps" > bench/results/breakdown.md
echo "breakdown.sh: wrote bench/results/breakdown.md"
