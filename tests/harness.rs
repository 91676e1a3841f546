//! The test kit's replica mode can fail: a replica that differs, one that cannot apply its
//! primary's stream, and one that died are each reported when the primary is dropped; keys that
//! expire during the comparison are not; and a test that is already failing is not turned into
//! an abort by a second panic.

mod common;
use common::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Drops the server and returns what its drop panicked with.
fn drop_report(server: Server) -> Option<String> {
    let result = catch_unwind(AssertUnwindSafe(move || drop(server)));
    result.err().map(|panic| panic_text(panic.as_ref()))
}

/// The replica of replica mode, made writable.
fn writable_replica(server: &Server) -> Conn {
    let mut r = server.replica().expect("replica mode").conn();
    assert_eq!(
        r.call(&["CONFIG", "SET", "replica-read-only", "no"]),
        Reply::Status("OK".into())
    );
    r
}

on_every_server! {
    fn a_replica_that_differs_is_reported_with_a_diff(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["SET", "same", "1"]);
        c.call(&["ZADD", "z", "1", "a"]);
        c.call(&["SELECT", "3"]);
        c.call(&["SET", "in-db3", "x", "PX", "600000"]);
        let mut r = writable_replica(&server);
        assert_eq!(c.call(&["WAIT", "1", "5000"]), Reply::Int(1));
        r.call(&["SELECT", "3"]);
        r.call(&["PEXPIRE", "in-db3", "700000"]);
        r.call(&["SELECT", "0"]);
        r.call(&["SET", "only-on-the-replica", "v"]);
        r.call(&["ZADD", "z", "2", "a"]);
        let report = drop_report(server).expect("the drop reports the difference");
        assert!(report.contains("3 keys differ"), "{report}");
        assert!(report.contains("db0 \"only-on-the-replica\""), "{report}");
        assert!(report.contains("db0 \"z\""), "{report}");
        assert!(report.contains("db3 \"in-db3\""), "{report}");
        assert!(!report.contains("\"same\""), "{report}");
    }
}

on_every_server! {
    /// A command the replica does not know (here ZADD, renamed away on the replica only):
    /// Redis 7.2+ and Valkey log it; Redis 7.0 skips it silently, and the data differ.
    fn a_stream_the_replica_cannot_apply_is_reported(flavor: Flavor) {
        let server = Server::builder(flavor).replica_args(["--rename-command", "ZADD", ""]).start();
        let mut c = server.conn();
        c.call(&["ZADD", "z", "1", "a"]);
        let report = drop_report(server).expect("the drop reports the unknown command");
        assert!(report.contains("db0 \"z\""), "{report}");
        if flavor.family() == Family::Valkey || flavor.version() >= (7, 2) {
            assert!(report.contains("could not apply") && report.to_lowercase().contains("unknown command 'zadd'"), "{report}");
        }
    }
}

on_every_server! {
    fn a_replica_that_died_is_reported_with_its_log(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut r = server.replica().expect("replica mode").conn();
        r.send(&["SHUTDOWN", "NOSAVE"]).expect("send");
        assert!(r.read().is_err(), "the replica closes the connection as it exits");
        let mut exited = false;
        for _ in 0..500 {
            if Conn::connect(server.replica().unwrap().port).is_err() {
                exited = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(exited);
        std::thread::sleep(std::time::Duration::from_millis(100));
        let report = drop_report(server).expect("the drop reports the dead replica");
        assert!(report.contains("died during the test; its log:"), "{report}");
        assert!(report.to_lowercase().contains("shutdown"), "{report}");
    }
}

on_every_server! {
    /// Keys expiring while the two sides are read are not differences.
    fn keys_expiring_during_the_comparison_are_not_differences(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let writes: Vec<Vec<String>> = (0..2000)
            .map(|i| vec!["SET".into(), format!("k{i}"), "v".into(), "PX".into(), (1 + i % 40).to_string()])
            .collect();
        c.pipeline(&writes);
        c.call(&["SET", "kept", "v"]);
        assert_eq!(drop_report(server), None);
    }
}

on_every_server! {
    /// A failing test whose servers differ fails with its own message: the drop prints its
    /// report instead of panicking again (which would abort the whole test binary).
    fn a_failing_test_is_not_turned_into_an_abort(flavor: Flavor) {
        let failing = std::thread::spawn(move || {
            let server = Server::start(flavor);
            let mut r = writable_replica(&server);
            r.call(&["SET", "only-on-the-replica", "v"]);
            server.replica().unwrap().conn().send(&["SHUTDOWN", "NOSAVE"]).expect("send");
            panic!("the test's own failure");
        });
        let panic = failing.join().expect_err("the test failed");
        assert_eq!(panic_text(panic.as_ref()), "the test's own failure");
    }
}

on_every_server! {
    fn a_server_in_replica_mode_refuses_to_be_killed_or_to_follow(flavor: Flavor) {
        let mut server = Server::start(flavor);
        let other = Server::builder(flavor).without_replica().start();
        let follow = catch_unwind(AssertUnwindSafe(|| server.follow(&other)));
        assert!(follow.is_err(), "follow in replica mode");
        let kill = catch_unwind(AssertUnwindSafe(|| server.kill()));
        assert!(kill.is_err(), "kill in replica mode");
        let shutdown = catch_unwind(AssertUnwindSafe(|| server.shutdown()));
        assert!(shutdown.is_err(), "shutdown in replica mode");
        let cluster = catch_unwind(|| Server::builder(flavor).cluster().start());
        assert!(cluster.is_err(), "a cluster node in replica mode");
        // Nothing was harmed: the end-of-test check still passes.
        server.conn().call(&["SET", "k", "v"]);
        assert_eq!(drop_report(server), None);
    }
}

on_every_server! {
    /// The table of what each server can do (`on_servers_with!` runs a test only where its
    /// capability is, and reports it ignored elsewhere) is what the running server does.
    fn the_capabilities_table_is_the_servers_own(flavor: Flavor) {
        let server = Server::builder(flavor).without_replica().start();
        let mut c = server.conn();
        for &capability in Capability::ALL {
            assert_eq!(capability.present(&mut c), flavor.has(capability), "{capability:?}");
        }
    }
}
