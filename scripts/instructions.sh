#!/usr/bin/env bash
# Instructions per call of every Goblin command that writes, against its floor and its native
# command, under callgrind; and each command's pipelined throughput beside its native or Lua
# anchor. Writes bench/results/instructions.md (docs/benchmark.md, "The floor").
#
#   scripts/instructions.sh [--servers redis70,redis82,valkey91,redis810] [--rows GOBLIN.GCRA,...]
#                           [--no-check] [--no-count] [--no-throughput] [--out FILE]
#                           [--module PATH] [--profile DIR]
#
# Builds the module, the floor (bench/floor, into target/floor: never part of make test) and
# the driver (bench/src/bin/instructions.rs), then: checks on every server that each floor
# command does what its Goblin command does (replies, replicated effects, events, data), counts
# the server's call() per call for Goblin, the floor and the natives, and measures throughput.
# Counting takes about 15 minutes on a 2-core machine; the figures do not swing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# valgrind (callgrind and its tools), installed with apt-get when missing and we are root.
if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        echo "instructions.sh: installing valgrind with apt-get"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
    fi
fi
for tool in valgrind callgrind_control callgrind_annotate; do
    command -v $tool >/dev/null || { echo "$tool not found (Debian: apt-get install valgrind)"; exit 1; }
done
cargo build --release -q
cargo build --release -q --manifest-path bench/floor/Cargo.toml --target-dir target/floor
cargo build --release -q -p goblin-bench --bin instructions
out=bench/results/instructions.md
for arg in "$@"; do [ "$arg" = --out ] && out=; done
exec target/release/instructions --floor target/floor/release/libgoblin_floor.so \
    ${out:+--out "$out"} "$@"
