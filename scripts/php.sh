#!/usr/bin/env bash
# The PHP side of the tests, the benchmark and the lint, all from Debian's archive (the only PHP
# registry this project reaches; Packagist is not one of them):
#
#   - with apt: PHP 8.2's CLI, phpredis, Predis 1.1, PHPUnit 9.6, Composer, Mockery, PHP_CodeSniffer,
#     and the Symfony 5.4 and Laravel 8 packages php/ works beneath (Lock, RateLimiter,
#     HttpKernel, Routing, illuminate/*; Cache, for the benchmark's stock rate limiter);
#   - a deb-src entry of the project's own, /etc/apt/sources.list.d/goblin-php-src.sources (the
#     same mirrors and suites as the machine's own Debian entries, Types: deb-src), so that
#   - `apt-get source` brings the source packages whose tests the suites run unmodified, pinned by
#     version: symfony 5.4.53+dfsg-0+deb12u1 and php-laravel-framework 8.83.26+dfsg-2, unpacked
#     into .servers/php/src/symfony and .servers/php/src/laravel (ignored by git; apt checks each
#     file against the signed .dsc);
#   - an application, .servers/php/app, that installs php/ as an application does: Composer,
#     offline, from a path repository (`composer install`, again only when php/composer.json
#     changes), whose vendor/autoload.php the tests and the benchmark load; and the examples'
#     own (examples/php/symfony, examples/php/laravel), the same way.
#
# and, with `analysis`, make lint's static analyser: Intelephense, from npm, pinned by
# scripts/php-analysis/package-lock.json (npm ci into scripts/php-analysis/node_modules, ignored
# by git; again only when the lockfile changes).
#
#   scripts/php.sh            all but the analyser (scripts/servers.sh: make test, make bench)
#   scripts/php.sh analysis   all of it (make lint)
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "php.sh: $*"; }
DIR=.servers/php
started=$SECONDS

PACKAGES=(php8.2-cli php-redis php-nrk-predis phpunit composer php-mockery php-codesniffer
    php-symfony-lock php-symfony-rate-limiter php-symfony-cache php-symfony-http-kernel php-symfony-routing
    php-laravel-framework)
SOURCES=(symfony=5.4.53+dfsg-0+deb12u1 php-laravel-framework=8.83.26+dfsg-2)
SRC_LIST=/etc/apt/sources.list.d/goblin-php-src.sources

as_root() {
    [ "$(id -u)" = 0 ] || {
        echo "php.sh: $1; run as root, or: sudo $2" >&2
        exit 1
    }
}

missing=()
for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    as_root "missing ${missing[*]}" "apt-get install -y ${missing[*]}"
    say "installing ${missing[*]} with apt-get"
    apt-get update -qq -o DPkg::Lock::Timeout=600
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
    say "apt-get took $((SECONDS - started)) s"
fi

# The source packages: a deb-src entry for each of the machine's Debian entries (deb822 files or
# one-line sources.list), written once; then the pinned versions, unpacked once.
unpacked() { [ -f "$DIR/src/symfony/src/Symfony/Component/Lock/Tests/Store/AbstractRedisStoreTestCase.php" ] &&
    [ -f "$DIR/src/laravel/tests/Redis/DurationLimiterTest.php" ]; }
if ! unpacked; then
    if [ ! -f "$SRC_LIST" ]; then
        as_root "no deb-src entry for the Symfony and Laravel sources" "bash scripts/php.sh"
        {
            echo "# Written by Goblin's scripts/php.sh: the sources of the machine's Debian entries, for"
            echo "# apt-get source symfony php-laravel-framework (the test suites php/ runs)."
            for file in /etc/apt/sources.list.d/*.sources; do
                [ "$file" = "$SRC_LIST" ] && continue
                grep -q '^URIs:.*debian' "$file" 2>/dev/null || continue
                sed -E 's/^Types:.*/Types: deb-src/' "$file"
                echo
            done
            if [ -f /etc/apt/sources.list ]; then
                grep -E '^deb[[:space:]].*debian' /etc/apt/sources.list | while read -r _ rest; do
                    read -r uri suite components <<<"$(sed -E 's/\[[^]]*\][[:space:]]*//' <<<"$rest")"
                    printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n\n' "$uri" "$suite" "$components"
                done
            fi
        } >"$SRC_LIST"
        grep -q '^Types: deb-src' "$SRC_LIST" || {
            rm -f "$SRC_LIST"
            echo "php.sh: the machine has no Debian entry in /etc/apt to take sources from" >&2
            exit 1
        }
        say "wrote $SRC_LIST"
        apt-get update -qq -o DPkg::Lock::Timeout=600
    fi
    mkdir -p "$DIR/debsrc"
    (cd "$DIR/debsrc" && apt-get source -qq --download-only "${SOURCES[@]}" 2>&1 |
        grep -v 'unsandboxed as root' || true)
    for spec in "${SOURCES[@]}"; do
        package=${spec%%=*}
        version=${spec#*=}
        dsc=$DIR/debsrc/${package}_${version}.dsc
        [ -f "$dsc" ] || { echo "php.sh: apt-get source did not bring $dsc" >&2; exit 1; }
    done
    rm -rf "$DIR/src"
    mkdir -p "$DIR/src"
    dpkg-source --no-check -x "$DIR/debsrc/symfony_5.4.53+dfsg-0+deb12u1.dsc" "$DIR/src/symfony" >/dev/null
    dpkg-source --no-check -x "$DIR/debsrc/php-laravel-framework_8.83.26+dfsg-2.dsc" "$DIR/src/laravel" >/dev/null
    rm -f "$DIR"/src/*.tar.*
    unpacked || { echo "php.sh: the source packages lack the test files the suites run" >&2; exit 1; }
    say "the Symfony and Laravel sources are in $DIR/src ($((SECONDS - started)) s)"
fi

# composer_install DIR: DIR's composer.json installed into DIR/vendor by Composer, offline, php/
# from its path repository (symlinked, so an edit of php/ needs no new install); again only when
# DIR's composer.json or php/composer.json changes.
composer_install() {
    local dir=$1 stamp=$1/vendor/.goblin-installed
    if cat "$dir/composer.json" php/composer.json | cmp -s - "$stamp" 2>/dev/null; then
        return
    fi
    say "composer install in $dir"
    rm -rf "$dir/vendor" "$dir/composer.lock"
    (cd "$dir" && COMPOSER_ALLOW_SUPERUSER=1 COMPOSER_HOME="$PWD/vendor/.composer-home" COMPOSER_DISABLE_NETWORK=1 \
        composer install --no-interaction --no-progress --quiet)
    cat "$dir/composer.json" php/composer.json >"$stamp"
}

# The application the tests and the benchmark load php/ from, as a user installs it from a clone.
mkdir -p "$DIR/app"
cat >"$DIR/app/composer.json.new" <<'JSON'
{
    "name": "goblin/test-application",
    "description": "An application that installs goblin/goblin-redis from the clone (scripts/php.sh)",
    "require": {
        "goblin/goblin-redis": "*"
    },
    "repositories": [
        {"type": "path", "url": "../../../php", "options": {"symlink": true}},
        {"packagist.org": false}
    ]
}
JSON
mv "$DIR/app/composer.json.new" "$DIR/app/composer.json"
composer_install "$DIR/app"
# The examples, each an application of its own (examples/php/).
composer_install examples/php/symfony
composer_install examples/php/laravel
mkdir -p examples/php/laravel/bootstrap/cache

if [ "${1:-}" = analysis ]; then
    tools=scripts/php-analysis
    stamp=$tools/node_modules/.goblin-installed-lock.json
    if ! cmp -s "$tools/package-lock.json" "$stamp" 2>/dev/null; then
        say "installing $tools/package-lock.json into $tools/node_modules"
        (cd "$tools" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
        cp "$tools/package-lock.json" "$stamp"
    fi
fi
