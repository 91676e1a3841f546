#!/usr/bin/env bash
# The Python the tests run, pinned by hash, in a virtualenv of our own (.servers/venv): redis-py,
# whose INCREX, DELEX and DIGEST methods the tests call, and the README's Python snippets.
# Reinstalled only when the pins change.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.servers/venv
PINS=scripts/python-requirements.txt
say() { echo "python.sh: $*"; }
started=$SECONDS
if cmp -s "$PINS" "$VENV/installed-requirements.txt" 2>/dev/null && [ -x "$VENV/bin/python" ]; then
    exit 0
fi
say "installing $PINS into $VENV"
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --no-deps --require-hashes -r "$PINS"
cp "$PINS" "$VENV/installed-requirements.txt"
say "took $((SECONDS - started)) s"
