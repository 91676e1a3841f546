# A LOCAL STAND-IN for the official Rust image, made by `make image-test` (scripts/image-test.sh)
# where no container registry can be reached. It is tagged with the exact name in the FROM line
# of docker/Dockerfile's build stage (for example rust:1.95.0-trixie) inside that script's
# private Docker daemon only, and is never pushed anywhere.
#
# How it differs from the official image (rust-lang/docker-rust, FROM buildpack-deps:<suite>,
# rustup's minimal profile):
#   - its toolchain is a copy of the machine's own: the files rustup's manifests list for rustc,
#     cargo and rust-std (the minimal profile), without rustup itself;
#   - the Debian base is the local debian:<suite> stand-in, plus only the C toolchain the
#     builds here need, not buildpack-deps' full set of libraries and version control tools;
#   - it trusts the CA certificates the machine added to its own store (ca/, copied from the
#     machine's /usr/local/share/ca-certificates), so that cargo can reach crates.io through a
#     proxy with its own authority. Only this build-stage stand-in carries them: the image
#     docker/Dockerfile makes copies one file out of that stage, the module.
# The build context is assembled by scripts/image-test.sh: this file, toolchain/ and ca/.

ARG SUITE
FROM debian:${SUITE}

RUN set -eux; \
	apt-get update; \
	apt-get install -y --no-install-recommends ca-certificates gcc libc6-dev make pkg-config; \
	rm -rf /var/lib/apt/lists/*

COPY ca/ /usr/local/share/ca-certificates/
RUN update-ca-certificates

ARG RUST_VERSION
ARG RUST_HOST
ENV RUSTUP_HOME=/usr/local/rustup \
    CARGO_HOME=/usr/local/cargo \
    PATH=/usr/local/cargo/bin:$PATH \
    RUST_VERSION=${RUST_VERSION}
# Writable by all, as in the official image; the script sets the modes before COPY, so that a
# chmod here does not copy the whole toolchain into a second layer.
COPY toolchain/ /usr/local/rustup/toolchains/${RUST_VERSION}-${RUST_HOST}/
RUN set -eux; \
	mkdir -p "$CARGO_HOME/bin"; \
	for tool in cargo rustc rustdoc; do \
		ln -s "$RUSTUP_HOME/toolchains/$RUST_VERSION-$RUST_HOST/bin/$tool" "$CARGO_HOME/bin/$tool"; \
	done; \
	chmod -R a+w "$CARGO_HOME"; \
	chmod a+w "$RUSTUP_HOME" "$RUSTUP_HOME/toolchains"; \
	cargo --version; \
	rustc --version
