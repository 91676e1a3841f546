#!/usr/bin/env bash
# The Python the tests, the benchmark and the lint run, pinned by hash, each set in a virtualenv
# of its own under .servers/ (ignored by git), and reinstalled only when its pins change:
#
#   venv          redis-py 8.1, whose INCREX, DELEX and DIGEST methods the tests call, and the
#                 docs' Python snippets               (scripts/python-requirements.txt)
#   venv-limits   limits 5.8.0's own test suite and benchmarks against goblin_redis.limits
#                 (scripts/python-requirements-limits.txt); limits' redis extras need redis-py
#                 < 8, hence a venv apart
#   venv-apps     the Flask-Limiter and slowapi examples, their tests, and ruff and mypy for
#                 make lint                           (scripts/python-requirements-apps.txt)
#
# and the source distribution of limits 5.8.0, whose tests/ the suite runs unmodified, checked
# against its pinned sha256 (.servers/sdists/limits-5.8.0.tar.gz).
#
#   scripts/python.sh             all of them (scripts/servers.sh, so make test and make bench)
#   scripts/python.sh NAME...     only these: venv, venv-limits, venv-apps, limits-sdist
#                                 (make lint: venv-apps)
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "python.sh: $*"; }

ALL=(venv venv-limits venv-apps limits-sdist)
WANTED=("$@")
[ ${#WANTED[@]} -eq 0 ] && WANTED=("${ALL[@]}")

LIMITS_SDIST=limits-5.8.0.tar.gz
LIMITS_SDIST_SHA256=c9e0d74aed837e8f6f50d1fcebcf5fd8130957287206bc3799adaee5092655da

# install_venv VENV PINS: the pins, and nothing else (--no-deps: every package is pinned).
install_venv() {
    local venv=.servers/$1 pins=$2 started=$SECONDS
    if cmp -s "$pins" "$venv/installed-requirements.txt" 2>/dev/null && [ -x "$venv/bin/python" ]; then
        return
    fi
    say "installing $pins into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --no-deps --require-hashes -r "$pins"
    cp "$pins" "$venv/installed-requirements.txt"
    say "$venv took $((SECONDS - started)) s"
}

# The sdist, from PyPI by pip (which prepares its metadata, so it builds nothing we keep), then
# checked by hash: a file that does not match is deleted, and that is fatal.
install_sdist() {
    local dir=.servers/sdists started=$SECONDS
    local file=$dir/$LIMITS_SDIST
    if [ ! -f "$file" ]; then
        say "downloading $LIMITS_SDIST"
        mkdir -p "$dir"
        python3 -m pip download --quiet --no-deps --no-binary=:all: -d "$dir" limits==5.8.0
    fi
    echo "$LIMITS_SDIST_SHA256  $file" | sha256sum --check --quiet - || {
        echo "python.sh: $file does not match its pinned sha256" >&2
        rm -f "$file"
        exit 1
    }
    [ $((SECONDS - started)) -gt 0 ] && say "$LIMITS_SDIST took $((SECONDS - started)) s"
    return 0
}

for name in "${WANTED[@]}"; do
    case $name in
        venv) install_venv venv scripts/python-requirements.txt ;;
        venv-limits) install_venv venv-limits scripts/python-requirements-limits.txt ;;
        venv-apps) install_venv venv-apps scripts/python-requirements-apps.txt ;;
        limits-sdist) install_sdist ;;
        *) echo "python.sh: unknown set $name (one of: ${ALL[*]})" >&2; exit 1 ;;
    esac
done
