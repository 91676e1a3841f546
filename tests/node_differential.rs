//! goblin-redis's stores against the Lua-backed stores they replace, call for call, on every server
//! (node/test/differential.test.mjs, node/test/differential.mjs): rate-limiter-flexible's
//! RateLimiterRedis and RateLimiterUnion, express-rate-limit's rate-limit-redis (with
//! express-slow-down and hono-rate-limiter over HTTP), @nest-lab/throttler-storage-redis (with
//! NestJS's guards over HTTP on both adapters) and @fastify/rate-limit's RedisStore (with the
//! plugin over HTTP), each driven by the same seeded random sequence of every operation and option
//! it documents, on every client library and protocol at once, on one server; and the same on a
//! three-node cluster with every library's cluster client (differential.cluster.test.mjs). Every
//! difference must be timing (a call that met a window's end) or one docs/node.md documents: the
//! tests fail on any other. The tallies (calls, and differences of each kind) are printed. Then
//! dropins.test.mjs pins each case the differential found, beside the original.

use goblin_testkit::*;

#[path = "node_support.rs"]
mod node;

/// Five stores on one server, and three apps over HTTP.
const DIFFERENTIAL_TESTS: u32 = 5 + 3;

/// The cases pinned: 8 of rate-limiter-flexible, 5 of express-rate-limit, 4 of NestJS, 1 of
/// @fastify/rate-limit (a window's end beside each original among them).
const DROPIN_TESTS: u32 = 8 + 5 + 4 + 1;

/// Every store on the cluster, every library at once.
const CLUSTER_DIFFERENTIAL_TESTS: u32 = 1;

/// The tallies a run printed.
fn report(label: &str, output: &str) {
    for line in output
        .lines()
        .filter(|line| line.contains("differential") && line.contains("total"))
    {
        eprintln!("{label}: {}", line.trim_start_matches(['#', ' ', '\\']));
    }
}

/// Both sides did their work: the originals' scripts, and Goblin's commands.
fn assert_both_ran(label: &str, calls: &std::collections::BTreeMap<String, u64>, goblin: &[&str]) {
    let scripts = ["eval", "evalsha"]
        .iter()
        .map(|name| calls.get(*name).copied().unwrap_or(0))
        .sum::<u64>();
    assert!(
        scripts > 0,
        "{label}: the originals ran no script: {calls:?}"
    );
    let idle: Vec<_> = goblin
        .iter()
        .filter(|name| calls.get(**name).copied().unwrap_or(0) == 0)
        .collect();
    assert!(idle.is_empty(), "{label}: {idle:?} never called: {calls:?}");
}

on_every_server! {
    /// differential.test.mjs on a server in replica mode (its replica, without the module, takes
    /// what both sides wrote).
    fn node_differential(flavor: Flavor) {
        let server = Server::start(flavor);
        let label = format!("{} (differential.test.mjs)", flavor.label());
        let output = node::run_tests(&label, "test/differential.test.mjs", &[("GOBLIN_TEST_SERVER", node::address(&server))], DIFFERENTIAL_TESTS);
        report(&label, &output);
        let bare = Server::builder(flavor).without_module().without_replica().start();
        let label = format!("{} (dropins.test.mjs)", flavor.label());
        node::run_tests(
            &label,
            "test/dropins.test.mjs",
            &[("GOBLIN_TEST_SERVER", node::address(&server)), ("GOBLIN_TEST_BARE", node::address(&bare))],
            DROPIN_TESTS,
        );
        let (calls, _) = summed_stats(&[&server]);
        assert_both_ran(&label, &calls, &["goblin.fwindow", "goblin.fwstats", "goblin.mfwindow", "increx"]);
    }
}

on_every_server! {
    /// differential.cluster.test.mjs on three primaries.
    fn node_differential_cluster(flavor: Flavor) {
        let nodes = node::start_cluster(flavor, 3);
        let label = format!("{} (differential.cluster.test.mjs)", flavor.label());
        let output = node::run_tests(&label, "test/differential.cluster.test.mjs", &[("GOBLIN_TEST_CLUSTER", node::addresses(&nodes))], CLUSTER_DIFFERENTIAL_TESTS);
        report(&label, &output);
        let (calls, _) = summed_stats(&nodes.iter().collect::<Vec<_>>());
        assert_both_ran(&label, &calls, &["goblin.fwindow", "goblin.fwstats", "goblin.mfwindow", "increx"]);
    }
}
