# Goblin: build, run and test the module against real servers.
#   make test     install what is missing, then unit tests and integration tests on
#                 Redis 7.0, Redis 8.2, Valkey 9.1 and Redis 8.10
#   make run      a server on 127.0.0.1:6379 with the module
#                 (SERVER=valkey91|redis82|redis70|redis810)
#   make lint     rustfmt and clippy (warnings as errors) on the crates, fuzz/ and the floor;
#                 ruff and mypy --strict on the Python; tsc and eslint on the Node;
#                 RuboCop and rbs on the Ruby;
#                 php -l, PHP_CodeSniffer and Intelephense on the PHP (php/, examples/php/, bench/php/)
#   make fuzz     libFuzzer on the pure core, FUZZ_SECONDS per target (cargo-fuzz)
#   make faults   the seeded fault campaign on real servers (faults/, docs/testing.md):
#                 MODULE=path SERVERS=valkey91,redis70 SECONDS=300 SEED=7, each optional (the
#                 release build, every server, 3 minutes each, a seed of the clock's); exits 1 on
#                 any violation and prints how to replay it
#   make faults-planted  the campaign on the test build with each planted defect: each caught
#   make bench    the benchmark: bench/results/latest.md and latest.png, a parked waiter's memory
#                 (bench/results/waiters.md), the memory per lock holder (bench/results/holders.md),
#                 then make instructions
#   make instructions  instructions per call against the floor module and the natives, and
#                 throughput beside them: bench/results/instructions.md
#   make breakdown  where each row's instructions go, Goblin against its floor, from callgrind's
#                 dumps of the same workloads: bench/results/breakdown.md
#   make image-test  build docker/Dockerfile on a private Docker daemon and check the image
#                 from inside a container (root; docs/container.md)

SERVER ?= valkey91
PORT ?= 6379
MODULE := $(CURDIR)/target/release/libgoblin.so
TEST_THREADS ?= 4

.PHONY: all deps build test unit integration lint run bench bench-smoke fuzz clean floor instructions breakdown faults faults-planted

all: build

deps:
	@bash scripts/servers.sh

build: deps
	cargo build --release

unit:
	cargo test --release -p goblin-core

integration: build
	cargo test --release --tests -p goblin -- --test-threads $(TEST_THREADS)

test: build
	cargo test --release --workspace -- --test-threads $(TEST_THREADS)
	$(MAKE) bench-smoke

# The benchmark harness once, tiny, so it cannot rot; it asserts nothing about time.
bench-smoke: build
	cargo run --release -p goblin-bench -- --smoke --out target/bench-smoke
	cargo run --release -p goblin-bench --bin waiters -- --smoke --servers valkey91 --out target/bench-smoke/waiters.md

# The fault campaign (faults/): per server one line `faults <server>: N operations, F faults,
# V violations`, then each violation's checker, seed and replay command. FAULTS_ARGS passes more
# (--phase, --until, --faults, --planted, --verbose: see faults/src/main.rs). The release build
# is built first unless MODULE names another. Network partitions need root (ip netns).
faults: deps
	@if [ "$(MODULE)" = "$(CURDIR)/target/release/libgoblin.so" ]; then cargo build --release; fi
	cargo run --release -p goblin-faults --bin faults -- --module $(MODULE) \
		$(if $(SERVERS),--servers $(SERVERS)) $(if $(SECONDS),--seconds $(SECONDS)) \
		$(if $(SEED),--seed $(SEED)) $(FAULTS_ARGS)

# Each planted defect (core/src/planted.rs) on the test build, one campaign each without a
# nemesis, stopped at its first finding: every one must be caught (exit 1 if one is not).
PLANTED := last-come-first extend-ignores-owner window-admits-one-more forgets-waiter-on-timeout
faults-planted: deps
	cargo build --release --lib -p goblin --features "test-clock-offset planted-defects" --target-dir target/test-build
	@for defect in $(PLANTED); do \
		out=$$(cargo run -q --release -p goblin-faults --bin faults -- --module target/test-build/release/libgoblin.so \
			--servers $(or $(SERVERS),redis82) --seconds 40 --seed $(or $(SEED),4600) --phase sentinel \
			--faults none --stop-on-violation --planted $$defect); status=$$?; \
		echo "$$out" | head -3; \
		if [ $$status -eq 0 ]; then echo "faults-planted: $$defect was not caught"; exit 1; fi; \
		echo "faults-planted: $$defect caught"; \
	done

# cargo fuzz needs nightly-only flags; RUSTC_BOOTSTRAP lets this stable toolchain take them.
# New inputs go to fuzz/work/ (ignored); fuzz/corpus/ holds the committed seeds.
FUZZ_SECONDS ?= 60
fuzz:
	command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
	for target in increx zwindow decimal gcra mgcra lines fwindow rwlock; do \
		mkdir -p fuzz/work/$$target; \
		RUSTC_BOOTSTRAP=1 cargo fuzz run -O $$target fuzz/work/$$target fuzz/corpus/$$target \
			-- -max_total_time=$(FUZZ_SECONDS) || exit 1; \
	done

bench: build floor
	cargo run --release -p goblin-bench -- $(BENCH_ARGS)
	cargo run --release -p goblin-bench --bin waiters
	cargo run --release -p goblin-bench --bin holders
	bash bench/python/run.sh
	bash bench/node/run.sh
	bash bench/ruby/run.sh
	bash bench/php/run.sh
	bash scripts/instructions.sh

# The floor module (bench/floor): only the benchmark builds it, into target/floor; make test
# never does (it is no member of the workspace).
FLOOR := --manifest-path bench/floor/Cargo.toml --target-dir target/floor
floor:
	cargo build --release $(FLOOR)

# Instructions per call under callgrind: Goblin, its floor, the natives (about 15 minutes).
instructions: build floor
	bash scripts/instructions.sh $(INSTRUCTIONS_ARGS)

# Where those instructions go (Goblin built with line tables into target/profile; about 15
# minutes): BREAKDOWN_ARGS="--servers redis82 --rows GOBLIN.GCRA" to limit it.
breakdown: build floor
	bash scripts/breakdown.sh $(BREAKDOWN_ARGS)

# docker/Dockerfile, unmodified, built on local stand-ins of its base images and run with no
# network; installs docker.io and debuerreotype if missing (docs/container.md).
.PHONY: image-test
image-test:
	bash scripts/image-test.sh

lint: deps
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo clippy -p goblin --lib --features "test-clock-offset planted-defects" -- -D warnings
	cargo fmt --manifest-path fuzz/Cargo.toml -- --check
	cargo clippy --manifest-path fuzz/Cargo.toml -- -D warnings
	cargo fmt --manifest-path bench/floor/Cargo.toml -- --check
	cargo clippy --release $(FLOOR) --all-targets -- -D warnings
	bash scripts/python.sh venv-apps
	.servers/venv-apps/bin/ruff check python examples/python bench/python
	.servers/venv-apps/bin/ruff format --check python examples/python bench/python
	.servers/venv-apps/bin/mypy --strict --config-file python/pyproject.toml python/src python/tests examples/python bench/python
	bash scripts/node.sh
	cd node && node_modules/.bin/tsc -p tsconfig.check.json && node_modules/.bin/eslint .
	for dir in examples/node bench/node; do (cd $$dir && ../../node/node_modules/.bin/eslint .) || exit 1; done
	bash scripts/ruby.sh
	rubocop -c ruby/.rubocop.yml ruby examples/ruby bench/ruby
	cd ruby && ruby -e 'load Gem.bin_path("rbs", "rbs")' -- -I sig validate >/dev/null
	bash scripts/php.sh analysis
	for file in $$(find php examples/php bench/php -name '*.php' -not -path '*/vendor/*' -not -path '*/cache/*'); do \
		php -d display_errors=stderr -l $$file >/dev/null || exit 1; \
	done
	phpcs --standard=php/phpcs.xml php/src php/tests examples/php bench/php
	node scripts/php-analysis/analyse.mjs php examples/php bench/php

# The server list lives in testkit/src/servers.rs; `server-path` says where SERVER's binary is.
# Installs only what SERVER needs (a first `make run` on Valkey builds no Redis 8.10).
run:
	@bash scripts/servers.sh $(SERVER)
	cargo build --release
	@bin=$$(cargo run -q --release -p goblin-testkit --bin server-path -- $(SERVER)) || exit 1; \
	echo "goblin: $(SERVER) on 127.0.0.1:$(PORT); in another shell:"; \
	echo "    redis-cli -p $(PORT) GOBLIN.ZWINDOW rl:user42 1000 10 3 req-a"; \
	exec "$$bin" --port $(PORT) --bind 127.0.0.1 --save "" --appendonly no --loadmodule $(MODULE)

clean:
	cargo clean
