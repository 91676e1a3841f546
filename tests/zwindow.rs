//! GOBLIN.ZWINDOW against real servers: its page's rows (run in tests/tables.rs), the
//! documented sessions verbatim, and every rule of the algorithm.

mod common;
use common::*;

on_every_server! {
    fn the_documented_sliding_limiter(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let z = |c: &mut Conn, now, member| zwindow(c, "rl:user42", now, "10", "3", member);
        assert_eq!(z(&mut c, "1000", "req-a"), Reply::Int(1)); // 1st in the window
        assert_eq!(z(&mut c, "1001", "req-b"), Reply::Int(1)); // 2nd
        assert_eq!(z(&mut c, "1002", "req-c"), Reply::Int(1)); // 3rd: window now full
        assert_eq!(z(&mut c, "1003", "req-d"), Reply::Int(0)); // over the limit
        assert_eq!(z(&mut c, "1015", "req-e"), Reply::Int(1)); // a/b/c aged out
        assert_eq!(c.call(&["TTL", "rl:user42"]), Reply::Int(10));
        assert_eq!(members(&mut c, "rl:user42"), ["req-e", "1015"]);
    }
}

on_every_server! {
    fn the_documented_mutex_with_lease(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let lock = |c: &mut Conn, now, worker| zwindow(c, "lock:job7", now, "30", "1", worker);
        assert_eq!(lock(&mut c, "5000", "worker-1"), Reply::Int(1)); // worker-1 holds the lock
        assert_eq!(lock(&mut c, "5001", "worker-2"), Reply::Int(0)); // contended
        assert_eq!(lock(&mut c, "5020", "worker-1"), Reply::Int(1)); // renewal keeps the lock
        assert_eq!(lock(&mut c, "5049", "worker-2"), Reply::Int(0)); // held until 5050
        assert_eq!(lock(&mut c, "5050", "worker-2"), Reply::Int(1)); // worker-1's lease aged out
        assert_eq!(members(&mut c, "lock:job7"), ["worker-2", "5050"]);
    }
}

on_every_server! {
    fn eviction_is_inclusive_of_the_cutoff(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["ZADD", "w", "90", "at-cutoff", "90.5", "inside"]);
        // cutoff = 100 - 10 = 90: the member scored exactly 90 has left the window.
        assert_eq!(zwindow(&mut c, "w", "100", "10", "2", "new"), Reply::Int(1));
        assert_eq!(members(&mut c, "w"), ["inside", "90.5", "new", "100"]);
    }
}

on_every_server! {
    fn negative_timestamps_are_evicted_too(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["ZADD", "w", "-50", "ancient", "-1e300", "older", "-inf", "oldest"]);
        assert_eq!(zwindow(&mut c, "w", "5", "10", "1", "new"), Reply::Int(1));
        assert_eq!(members(&mut c, "w"), ["new", "5"]);
    }
}

on_every_server! {
    fn a_holder_refreshes_its_one_slot_in_a_full_window(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(zwindow(&mut c, "sem", "1", "100", "2", "a"), Reply::Int(1));
        assert_eq!(zwindow(&mut c, "sem", "2", "100", "2", "b"), Reply::Int(1));
        assert_eq!(zwindow(&mut c, "sem", "3", "100", "2", "c"), Reply::Int(0));
        c.call(&["EXPIRE", "sem", "5"]);
        assert_eq!(zwindow(&mut c, "sem", "4", "100", "2", "a"), Reply::Int(1));
        assert_eq!(members(&mut c, "sem"), ["b", "2", "a", "4"]);
        assert_eq!(c.call(&["TTL", "sem"]), Reply::Int(100), "a refresh re-arms the TTL");
        // Even a limit since lowered to 0 does not take a holder's own slot away.
        assert_eq!(zwindow(&mut c, "sem", "5", "100", "0", "b"), Reply::Int(1));
        assert_eq!(c.call(&["ZCARD", "sem"]), Reply::Int(2));
    }
}

on_every_server! {
    fn fractional_windows_expire_rounded_up_to_the_millisecond(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        // window -> TTL in ms: the window rounded up to the millisecond.
        for (key, window, ttl_ms) in [("half", "0.5", 500), ("w", "2.5", 2500), ("odd", "1.0005", 1001), ("tiny", "0.0001", 1)] {
            let before = server_ms(&mut c);
            let replies = c.pipeline(&[
                vec!["GOBLIN.ZWINDOW", key, "1", window, "1", "a"],
                vec!["PEXPIRETIME", key],
            ]);
            let after = server_ms(&mut c);
            assert_eq!(replies[0], Reply::Int(1), "{key}");
            let at = replies[1].int();
            // A 1 ms TTL may be over before PEXPIRETIME runs.
            if at == -2 && ttl_ms == 1 {
                continue;
            }
            assert!(
                (before + ttl_ms..=after + ttl_ms).contains(&at),
                "{key}: window {window} expires at {at}, expected {ttl_ms} ms after a call in [{before}, {after}]"
            );
        }
    }
}

on_every_server! {
    fn members_are_binary_safe(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let member: &[u8] = b"\x00\xff id with spaces \r\n";
        let reply = c.call(&[&b"GOBLIN.ZWINDOW"[..], b"w", b"1", b"10", b"2", member]);
        assert_eq!(reply, Reply::Int(1));
        assert_eq!(c.call(&[&b"ZSCORE"[..], b"w", member]), bulk("1"));
        let empty: &[u8] = b"";
        let reply = c.call(&[&b"GOBLIN.ZWINDOW"[..], b"w", b"2", b"10", b"2", empty]);
        assert_eq!(reply, Reply::Int(1));
        assert_eq!(c.call(&["ZCARD", "w"]), Reply::Int(2));
    }
}

on_every_server! {
    fn scores_keep_full_double_precision(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let now = "1700000000.1234567";
        assert_eq!(zwindow(&mut c, "w", now, "60", "5", "a"), Reply::Int(1));
        c.call(&["ZADD", "ref", now, "a"]);
        assert_eq!(c.call(&["ZSCORE", "w", "a"]), c.call(&["ZSCORE", "ref", "a"]));
    }
}

on_every_server! {
    fn bad_numbers_are_refused_before_anything_is_written(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["ZADD", "w", "1", "old"]);
        c.call(&["EXPIRE", "w", "100"]);
        for bad in ["abc", "nan", "inf", "-inf", "+inf", "1e400", "", " 1", "1 ", "0x", "1,5"] {
            let now = ["GOBLIN.ZWINDOW", "w", bad, "10", "1", "m"];
            assert_error_writes_nothing(&mut c, &now, "w", NOT_FLOAT);
            let window = ["GOBLIN.ZWINDOW", "w", "100", bad, "1", "m"];
            assert_error_writes_nothing(&mut c, &window, "w", NOT_FLOAT);
        }
        for bad in ["abc", "1.5", "1e3", " 1", "0x10", "", "9223372036854775808"] {
            let limit = ["GOBLIN.ZWINDOW", "w", "100", "10", bad, "m"];
            assert_error_writes_nothing(&mut c, &limit, "w", NOT_INTEGER);
        }
        // Left to right: `now` is judged before `limit`.
        let both = ["GOBLIN.ZWINDOW", "w", "x", "10", "y", "m"];
        assert_error_writes_nothing(&mut c, &both, "w", NOT_FLOAT);
        assert_eq!(members(&mut c, "w"), ["old", "1"]);
    }
}

on_every_server! {
    fn other_types_are_wrongtype_after_syntax(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["SET", "s", "1"]);
        c.call(&["HSET", "h", "f", "1"]);
        c.call(&["RPUSH", "l", "1"]);
        for key in ["s", "h", "l"] {
            assert_error_writes_nothing(&mut c, &["GOBLIN.ZWINDOW", key, "1", "10", "1", "m"], key, WRONGTYPE);
        }
        assert_error_writes_nothing(&mut c, &["GOBLIN.ZWINDOW", "s", "1", "10", "x", "m"], "s", NOT_INTEGER);
    }
}

on_every_server! {
    fn the_lock_self_heals_when_its_holder_dies(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        // Real time this time: a 0.3 s lease, a holder that never renews.
        assert_eq!(zwindow(&mut c, "lock", "0", "0.3", "1", "dead-holder"), Reply::Int(1));
        assert_eq!(zwindow(&mut c, "lock", "0.1", "0.3", "1", "next"), Reply::Int(0));
        // The idle key reaps itself one window after its last admit.
        assert!(wait_until(std::time::Duration::from_secs(3), || c.call(&["EXISTS", "lock"]) == Reply::Int(0)));
        assert_eq!(zwindow(&mut c, "lock", "0.4", "0.3", "1", "next"), Reply::Int(1));
    }
}

on_every_server! {
    fn evicts_any_number_of_members_in_one_call(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        // Around the module's internal chunk size (64) and well past it, in both encodings
        // (listpack below 128 members, skiplist above).
        for old in [63usize, 64, 65, 128, 129, 1000] {
            let key = format!("w{old}");
            for i in 0..old {
                c.call(&["ZADD", &key, &i.to_string(), &format!("old{i}")]);
            }
            c.call(&["ZADD", &key, "5000", "inside-a", "5001", "inside-b"]);
            assert_eq!(zwindow(&mut c, &key, "6000", "1500", "3", "new"), Reply::Int(1));
            assert_eq!(members(&mut c, &key), ["inside-a", "5000", "inside-b", "5001", "new", "6000"], "{old} old members");
        }
    }
}

on_every_server! {
    /// A window that idled with thousands of members in it: one call removes about a budget's
    /// worth (1,024) and still decides on the members inside the window alone; later calls
    /// remove the rest. A replica stays identical throughout.
    fn a_huge_backlog_is_evicted_a_slice_per_call_with_exact_decisions(flavor: Flavor) {
        let primary = Server::start(flavor);
        // Replica mode's replica: without the module.
        let replica = primary.replica().expect("replica mode");
        let mut c = primary.conn();
        let mut r = replica.conn();
        // 5,000 members that have left the window, 2 inside it.
        let old: Vec<Vec<String>> = (0..5000)
            .map(|i| vec!["ZADD".into(), "w".into(), i.to_string(), format!("old{i}")])
            .collect();
        c.pipeline(&old);
        c.call(&["ZADD", "w", "100000", "in-a", "100001", "in-b"]);

        // limit 3: one slot left for a newcomer, whatever the old members still in the set.
        assert_eq!(zwindow(&mut c, "w", "100002", "50000", "3", "new-1"), Reply::Int(1));
        let left = c.call(&["ZCOUNT", "w", "-inf", "50002"]).int();
        assert_eq!(left, 5000 - 1024, "one call removes one budget's worth");
        assert_eq!(zwindow(&mut c, "w", "100003", "50000", "3", "new-2"), Reply::Int(0));
        // A holder refreshes; an old member coming back is a newcomer, not a holder.
        assert_eq!(zwindow(&mut c, "w", "100004", "50000", "3", "in-a"), Reply::Int(1));
        assert_eq!(zwindow(&mut c, "w", "100005", "50000", "3", "old4999"), Reply::Int(0));
        assert_eq!(c.call(&["ZCOUNT", "w", "(50005", "+inf"]), Reply::Int(3));
        for _ in 0..3 {
            zwindow(&mut c, "w", "100006", "50000", "3", "again");
        }
        assert_eq!(c.call(&["ZCOUNT", "w", "-inf", "50006"]), Reply::Int(0), "the backlog is gone");
        assert_eq!(c.call(&["WAIT", "1", "5000"]), Reply::Int(1));
        let on_primary = c.call(&["ZRANGE", "w", "0", "-1", "WITHSCORES"]);
        assert_eq!(r.call(&["ZRANGE", "w", "0", "-1", "WITHSCORES"]), on_primary);
    }
}

on_every_server! {
    /// Members tied at one score leave together, even past the budget, so that "everything at
    /// or below this score" is exactly what a replica must remove too.
    fn members_tied_at_the_budget_boundary_leave_together(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let old: Vec<Vec<String>> = (0..3000)
            .map(|i| vec!["ZADD".into(), "w".into(), if i < 1000 { i.to_string() } else { "5000".into() }, format!("old{i}")])
            .collect();
        c.pipeline(&old);
        c.call(&["ZADD", "w", "9000", "after-the-tie"]);
        assert_eq!(zwindow(&mut c, "w", "100000", "10", "1", "new"), Reply::Int(1));
        // 1,000 below the tie, then the whole tie group of 2,000 at 5000; the next score stays.
        assert_eq!(c.call(&["ZCOUNT", "w", "-inf", "5000"]), Reply::Int(0));
        assert_eq!(c.call(&["ZSCORE", "w", "after-the-tie"]), bulk("9000"));
    }
}

on_every_server! {
    /// A member still waiting in a backlog is a newcomer when it comes back: admitted only if
    /// there is room, and counted as admitted, not refreshed.
    fn a_member_left_in_a_backlog_comes_back_as_a_newcomer(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let old: Vec<Vec<String>> = (0..3000)
            .map(|i| vec!["ZADD".into(), "w".into(), i.to_string(), format!("old{i}")])
            .collect();
        c.pipeline(&old);
        c.call(&["ZADD", "w", "100000", "in-a"]);
        // old2999 survives this call's slice (1,024 go) and is back, with room (1 of 2 taken).
        assert_eq!(zwindow(&mut c, "w", "100001", "50000", "2", "old2999"), Reply::Int(1));
        assert_eq!(c.call(&["ZSCORE", "w", "old2999"]), bulk("100001"));
        let info = c.call(&["INFO", "goblin"]).text();
        assert!(info.contains("goblin_zwindow_admitted:1\r\n"), "{info}");
        assert!(info.contains("goblin_zwindow_refreshed:0\r\n"), "{info}");
        // Now the window is full (in-a, old2999): a stale member is refused like any newcomer.
        assert_eq!(zwindow(&mut c, "w", "100002", "50000", "2", "old2998"), Reply::Int(0));
    }
}
