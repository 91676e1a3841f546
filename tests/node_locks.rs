//! goblin-redis's locks (node/) on every server, by its own Node tests (node/test/, `node --test`):
//! the locks on every client library and protocol, a server without the module beside
//! (locks.test.mjs); an acquire aborted at each of its moments, through a relay that holds the
//! server's replies back (abort.test.mjs); processes killed while they wait or hold, and waiters
//! parked through a failover (reliability.test.mjs); a three-node cluster (cluster.test.mjs); the
//! ReadWriteLock (rwlock.test.mjs); and the Redlock classes' quorum, whatever their options and
//! whatever one server does (redlock.test.mjs). Each file must
//! pass exactly its count of tests, and afterwards the servers' commandstats must show that no
//! script ran and the Goblin commands did the work, and, on the cluster, no MOVED.

use goblin_testkit::*;

#[path = "node_support.rs"]
mod node;

/// 15 tests on each of the 8 client libraries and protocols, 5 of waiting, 8 against a server
/// without the module, 3 of Redlock.
const LOCK_TESTS: u32 = 15 * 8 + 5 + 8 + 3;

/// 5 tests of the ReadWriteLock on each of the 8 client libraries and protocols, and one against
/// a server without the module on each.
const RWLOCK_TESTS: u32 = 5 * 8 + 8;
/// 5 moments of an abort for the three classes, and 5 for their Redlock twins, on each of the 8
/// client libraries and protocols.
const ABORT_TESTS: u32 = (5 + 5) * 8;

/// On each of the 8 client libraries and protocols: no acquire without a quorum for each of the
/// three Redlock classes (3), `waitOn` (1), and a refresh with a server paused and one gone (2).
const REDLOCK_TESTS: u32 = (3 + 1 + 2) * 8;

/// Process deaths for a mutex and a semaphore (4), and a failover on each library (8).
const RELIABILITY_TESTS: u32 = 4 + 8;

/// 3 on each library's cluster client (the locks, the readers-writer lock, the rate limiters),
/// keyPrefix on the 5 that have one, and a NestJS app over HTTP on both adapters with 2 libraries.
const CLUSTER_TESTS: u32 = 3 * 8 + 5 + 2 * 2;

const LOCK_COMMANDS: [&str; 6] = [
    "goblin.lock",
    "goblin.block",
    "goblin.cad",
    "goblin.extend",
    "goblin.zwindow",
    "goblin.bzwindow",
];

on_every_server! {
    /// locks.test.mjs: one server in replica mode (its replica, without the module, checks what the
    /// locks wrote), one without the module, and Redlock's other two servers.
    fn node_lock_tests(flavor: Flavor) {
        let server = Server::start(flavor);
        // Without the module: nothing to replicate, so no replica; Redlock's other two servers
        // have none either (the first one's replica checks what the classes write).
        let bare = Server::builder(flavor).without_module().without_replica().start();
        let others: Vec<Server> = (0..2).map(|_| Server::builder(flavor).without_replica().start()).collect();
        let redlock = format!("{},{}", node::address(&server), node::addresses(&others));
        let label = format!("{} (locks.test.mjs)", flavor.label());
        node::run_tests(
            &label,
            "test/locks.test.mjs",
            &[
                ("GOBLIN_TEST_SERVER", node::address(&server)),
                ("GOBLIN_TEST_BARE", node::address(&bare)),
                ("GOBLIN_TEST_SERVERS", redlock),
            ],
            LOCK_TESTS,
        );
        let (calls, _) = summed_stats(&[&server, &others[0], &others[1]]);
        node::assert_no_scripts(&label, &calls, &LOCK_COMMANDS);
    }
}

on_every_server! {
    /// rwlock.test.mjs: one server in replica mode (its replica, without the module, checks what
    /// the lock wrote), and one without the module.
    fn node_rwlock_tests(flavor: Flavor) {
        let server = Server::start(flavor);
        let bare = Server::builder(flavor).without_module().without_replica().start();
        let label = format!("{} (rwlock.test.mjs)", flavor.label());
        node::run_tests(
            &label,
            "test/rwlock.test.mjs",
            &[("GOBLIN_TEST_SERVER", node::address(&server)), ("GOBLIN_TEST_BARE", node::address(&bare))],
            RWLOCK_TESTS,
        );
        let (calls, _) = summed_stats(&[&server]);
        node::assert_no_scripts(
            &label,
            &calls,
            &["goblin.rlock", "goblin.wlock", "goblin.brlock", "goblin.bwlock", "goblin.rwextend", "goblin.rwunlock", "goblin.rwheld"],
        );
    }

    /// abort.test.mjs: one server for the single-server classes, three for the Redlock ones, each
    /// reached through the test's relay.
    fn node_abort_tests(flavor: Flavor) {
        let server = Server::start(flavor);
        let others: Vec<Server> = (0..3).map(|_| Server::builder(flavor).without_replica().start()).collect();
        let label = format!("{} (abort.test.mjs)", flavor.label());
        node::run_tests(
            &label,
            "test/abort.test.mjs",
            &[("GOBLIN_TEST_SERVER", node::address(&server)), ("GOBLIN_TEST_SERVERS", node::addresses(&others))],
            ABORT_TESTS,
        );
        let (calls, _) = summed_stats(&[&server, &others[0], &others[1], &others[2]]);
        node::assert_no_scripts(&label, &calls, &["goblin.lock", "goblin.block", "goblin.cad", "goblin.zwindow", "goblin.bzwindow"]);
    }
}

on_every_server! {
    /// redlock.test.mjs on three servers (the first with its replica, which checks what the
    /// classes wrote there); the test pauses the third (SIGSTOP, then SIGCONT) and cuts it off
    /// through a relay of its own.
    fn node_redlock_tests(flavor: Flavor) {
        let first = Server::start(flavor);
        let others: Vec<Server> = (0..2).map(|_| Server::builder(flavor).without_replica().start()).collect();
        let label = format!("{} (redlock.test.mjs)", flavor.label());
        node::run_tests(
            &label,
            "test/redlock.test.mjs",
            &[("GOBLIN_TEST_SERVERS", format!("{},{}", node::address(&first), node::addresses(&others)))],
            REDLOCK_TESTS,
        );
        let (calls, _) = summed_stats(&[&first, &others[0], &others[1]]);
        node::assert_no_scripts(&label, &calls, &LOCK_COMMANDS);
    }
}

on_every_server! {
    /// reliability.test.mjs: 1,000 waiters in 10 processes, 3 killed; a holder killed; a failover.
    fn node_reliability_tests(flavor: Flavor) {
        let server = Server::start(flavor);
        // A primary and its replica, both with the module, which the test fails over and back:
        // servers the test makes replicas of each other have no replica of replica mode.
        let primary = Server::builder(flavor).without_replica().start();
        let replica = Server::builder(flavor).without_replica().start();
        replica.follow(&primary);
        let label = format!("{} (reliability.test.mjs)", flavor.label());
        node::run_tests(
            &label,
            "test/reliability.test.mjs",
            &[
                ("GOBLIN_TEST_SERVER", node::address(&server)),
                ("GOBLIN_TEST_FAILOVER", format!("{},{}", node::address(&primary), node::address(&replica))),
            ],
            RELIABILITY_TESTS,
        );
        let (calls, _) = summed_stats(&[&server, &primary]);
        node::assert_no_scripts(&label, &calls, &["goblin.lock", "goblin.block", "goblin.cad", "goblin.zwindow", "goblin.bzwindow"]);
    }
}

on_every_server! {
    /// cluster.test.mjs on three primaries: every command reaches its key's node the first time.
    fn node_cluster_tests(flavor: Flavor) {
        let nodes = node::start_cluster(flavor, 3);
        let label = format!("{} (cluster.test.mjs)", flavor.label());
        node::run_tests(&label, "test/cluster.test.mjs", &[("GOBLIN_TEST_CLUSTER", node::addresses(&nodes))], CLUSTER_TESTS);
        let (calls, errors) = summed_stats(&nodes.iter().collect::<Vec<_>>());
        node::assert_no_scripts(&label, &calls, &["goblin.block", "goblin.bzwindow", "goblin.bwlock", "goblin.fwindow", "goblin.mfwindow", "goblin.mgcra"]);
        assert_eq!(errors.get("MOVED").copied().unwrap_or(0), 0, "{label}: redirections: {errors:?}");
        assert_eq!(errors.get("ASK").copied().unwrap_or(0), 0, "{label}: redirections: {errors:?}");
    }
}
