//! goblin-redis's rate limiters (node/) on every server: @fastify/rate-limit 11.2.0's own
//! `test/redis-rate-limit.test.js` from its npm tarball (installed by scripts/node.sh from
//! node/package-lock.json, pinned by integrity), unmodified, run on Goblin through a preload
//! (node/test/suites/fastify.cjs): its 16 tests pass; then the package's own rate-limiter tests
//! (node/test/limits.test.mjs) and the example apps over HTTP (examples/node/test.mjs). Afterwards the
//! servers' commandstats must show that no script and no transaction ran.

use goblin_testkit::*;

#[path = "node_support.rs"]
mod node;

/// @fastify/rate-limit's Redis tests: 10 of the global limit, 6 of route limits.
const FASTIFY_SUITE_TESTS: u32 = 16;

/// 7 of RateLimiterGoblin and 2 of the GCRA commands' replies (CL.THROTTLE, GOBLIN.GCRA PEEK) on
/// each of the 8 libraries; per HTTP library (2), 6 of express (with express-slow-down and
/// hono-rate-limiter), 2 of fastify's store option, 3 of NestJS; 1 against a server without the
/// module.
const LIMIT_TESTS: u32 = 7 * 8 + 2 * 8 + 2 * (6 + 2 + 3) + 1;

on_every_server! {
    /// The plugin's own test file, as the tarball ships it, against a server in replica mode.
    fn fastify_rate_limit_suite(flavor: Flavor) {
        let server = Server::start(flavor);
        let label = format!("{} (@fastify/rate-limit's redis-rate-limit.test.js)", flavor.label());
        let output = node::run_node(
            &label,
            &["--require", "./test/suites/fastify.cjs", "--test", "node_modules/@fastify/rate-limit/test/redis-rate-limit.test.js"],
            &[("GOBLIN_TEST_PORT", server.port.to_string())],
        );
        node::assert_all_passed(&label, &output, FASTIFY_SUITE_TESTS);
        let (calls, _) = summed_stats(&[&server]);
        node::assert_no_scripts(&label, &calls, &["goblin.fwindow", "goblin.fwstats"]);
    }
}

on_every_server! {
    /// limits.test.mjs: one server in replica mode, one without the module.
    fn node_limit_tests(flavor: Flavor) {
        let server = Server::start(flavor);
        // Without the module: nothing to replicate, so no replica either.
        let bare = Server::builder(flavor).without_module().without_replica().start();
        let label = format!("{} (limits.test.mjs)", flavor.label());
        node::run_tests(
            &label,
            "test/limits.test.mjs",
            &[("GOBLIN_TEST_SERVER", node::address(&server)), ("GOBLIN_TEST_BARE", node::address(&bare))],
            LIMIT_TESTS,
        );
        let (calls, _) = summed_stats(&[&server]);
        node::assert_no_scripts(&label, &calls, &["goblin.fwindow", "goblin.fwstats", "goblin.mfwindow"]);
    }
}

/// The example apps (examples/node/test.mjs): Express, Fastify, and NestJS on both adapters.
const EXAMPLE_TESTS: u32 = 4;

on_every_server! {
    /// Each example app started as its own process and driven over HTTP.
    fn node_examples(flavor: Flavor) {
        let server = Server::start(flavor);
        let label = format!("{} (examples/node)", flavor.label());
        node::run_tests(&label, "../examples/node/test.mjs", &[("GOBLIN_TEST_SERVER", node::address(&server))], EXAMPLE_TESTS);
        let (calls, _) = summed_stats(&[&server]);
        node::assert_no_scripts(&label, &calls, &["goblin.fwindow", "goblin.mfwindow", "goblin.lock"]);
    }
}
