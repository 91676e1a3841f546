#!/usr/bin/env bash
# The Node side of the tests, the benchmark and the lint: node/'s pinned packages, installed by
# `npm ci` from node/package-lock.json (every package pinned by its integrity hash, among them
# @fastify/rate-limit 11.2.0, whose tarball carries the test file tests/node_limits.rs runs) into
# node/node_modules (ignored by git), and reinstalled only when the lockfile changes; then the
# package built (node/dist), and three links, all ignored: node/node_modules/goblin-redis, the
# package itself, and examples/node/node_modules and bench/node/node_modules, node/node_modules, so
# that the examples and the benchmark import goblin-redis and their libraries by name, as an
# application does.
#
#   scripts/node.sh          install (if the lockfile changed) and build (scripts/servers.sh, make lint)
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "node.sh: $*"; }

command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || {
    echo "node.sh: node and npm are needed (Node.js 20 or later)" >&2
    exit 1
}
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || { echo "node.sh: Node.js 20 or later is needed, not $(node --version)" >&2; exit 1; }

started=$SECONDS
stamp=node/node_modules/.goblin-installed-lock.json
if ! cmp -s node/package-lock.json "$stamp" 2>/dev/null; then
    say "installing node/package-lock.json into node/node_modules"
    # --ignore-scripts: no package's install script runs (none of them needs one here).
    (cd node && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    cp node/package-lock.json "$stamp"
    say "node/node_modules took $((SECONDS - started)) s"
fi
ln -sfn .. node/node_modules/goblin-redis
ln -sfn ../../node/node_modules examples/node/node_modules
ln -sfn ../../node/node_modules bench/node/node_modules
node node/scripts/build.cjs
