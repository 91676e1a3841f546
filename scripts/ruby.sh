#!/usr/bin/env bash
# The Ruby side of the tests, the benchmark and the lint: Debian's Ruby and the libraries the gem
# (ruby/) is tested on, installed with apt-get when one is missing (we are root on CI and on the
# developers' machines; otherwise it prints the command): ruby (3.1, with rbs), ruby-redis
# (redis-rb 4.8), ruby-connection-pool, ruby-rack, ruby-rack-attack (6.6.1), ruby-rack-test,
# ruby-minitest, ruby-webrick (the example app's server), the stores rack-attack is given that
# the gem's store goes beneath (ruby-redis-store 1.9, the redis-store gem; ruby-activesupport
# 6.1, Rails' RedisCacheStore; ruby-redis-activesupport 5.3, its RedisStore) and rubocop
# (make lint).
#
#   scripts/ruby.sh          install what is missing (scripts/servers.sh, make lint)
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "ruby.sh: $*"; }

packages=(ruby ruby-redis ruby-connection-pool ruby-rack ruby-rack-attack ruby-rack-test
    ruby-minitest ruby-webrick ruby-redis-store ruby-activesupport ruby-redis-activesupport rubocop)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' ||
        missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "ruby.sh: missing ${missing[*]}; run: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
started=$SECONDS
say "installing ${missing[*]} with apt-get"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
say "apt-get took $((SECONDS - started)) s"
