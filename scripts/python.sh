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
#   venv-locks    redis-py 8.1.0's own lock tests against goblin_redis.lock, and our lock and
#                 semaphore tests                     (scripts/python-requirements-locks.txt)
#
# and the source distributions whose tests/ the suites run unmodified, each checked against its
# pinned sha256: limits 5.8.0 (.servers/sdists/limits-5.8.0.tar.gz) and redis-py 8.1.0
# (.servers/sdists/redis-8.1.0.tar.gz).
#
#   scripts/python.sh             all of them (scripts/servers.sh, so make test and make bench)
#   scripts/python.sh NAME...     only these: venv, venv-limits, venv-apps, venv-locks,
#                                 limits-sdist, redis-sdist (make lint: venv-apps)
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "python.sh: $*"; }

ALL=(venv venv-limits venv-apps venv-locks limits-sdist redis-sdist)
WANTED=("$@")
[ ${#WANTED[@]} -eq 0 ] && WANTED=("${ALL[@]}")

LIMITS_SDIST_SHA256=c9e0d74aed837e8f6f50d1fcebcf5fd8130957287206bc3799adaee5092655da
REDIS_SDIST_SHA256=6e1a19beef9225c83efd689c7e6b7da2d5215b1f42cd13b7fc3714d0a09c7b25

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

# install_sdist PACKAGE VERSION SHA256: the sdist, from PyPI by pip (which prepares its
# metadata, so it builds nothing we keep), then checked by hash: a file that does not match is
# deleted, and that is fatal.
install_sdist() {
    local package=$1 version=$2 sha256=$3 dir=.servers/sdists started=$SECONDS
    local sdist=$package-$version.tar.gz
    local file=$dir/$sdist
    if [ ! -f "$file" ]; then
        say "downloading $sdist"
        mkdir -p "$dir"
        python3 -m pip download --quiet --no-deps --no-binary=:all: -d "$dir" "$package==$version"
    fi
    echo "$sha256  $file" | sha256sum --check --quiet - || {
        echo "python.sh: $file does not match its pinned sha256" >&2
        rm -f "$file"
        exit 1
    }
    [ $((SECONDS - started)) -gt 0 ] && say "$sdist took $((SECONDS - started)) s"
    return 0
}

for name in "${WANTED[@]}"; do
    case $name in
        venv) install_venv venv scripts/python-requirements.txt ;;
        venv-limits) install_venv venv-limits scripts/python-requirements-limits.txt ;;
        venv-apps) install_venv venv-apps scripts/python-requirements-apps.txt ;;
        venv-locks) install_venv venv-locks scripts/python-requirements-locks.txt ;;
        limits-sdist) install_sdist limits 5.8.0 "$LIMITS_SDIST_SHA256" ;;
        redis-sdist) install_sdist redis 8.1.0 "$REDIS_SDIST_SHA256" ;;
        *) echo "python.sh: unknown set $name (one of: ${ALL[*]})" >&2; exit 1 ;;
    esac
done
