#!/bin/sh
# The local Valkey stand-in's entrypoint (see valkey.Dockerfile): our own short equivalent of the
# official image's docker-entrypoint.sh, doing what it does, in the same order.
set -e

# Options or a config file alone mean valkey-server with them.
case "$1" in
	-*|*.conf) set -- valkey-server "$@" ;;
esac

if [ "$1" = valkey-server ]; then
	if [ "$(id -u)" = 0 ]; then
		# Started as root: hand the working directory (/data, maybe a fresh volume) to valkey,
		# then run this script again as valkey.
		find . ! -user valkey -exec chown valkey '{}' +
		exec setpriv --reuid=valkey --regid=valkey --clear-groups -- "$0" "$@"
	elif [ ! -w . ]; then
		echo >&2 "warning: $(pwd) is not writable by user $(id -u); persistence will fail"
	fi
fi

# Files the server writes are private to it, unless the caller chose a umask of its own.
if [ "$(umask)" = 0022 ]; then
	umask 0077
fi

# VALKEY_EXTRA_FLAGS is split into words on purpose.
# shellcheck disable=SC2086
exec "$@" $VALKEY_EXTRA_FLAGS
