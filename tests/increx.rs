//! GOBLIN.INCREX against real servers: every row of SPEC's table, the seed session, and INCR's
//! own parser as the judge of what a counter is.

mod common;
use common::*;

on_every_server! {
    fn seed_session_fixed_window(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        // > GOBLIN.INCREX rate:user42 60   -> 1, 60s window armed
        assert_eq!(increx(&mut c, "rate:user42", "60"), Reply::Int(1));
        // > GOBLIN.INCREX rate:user42 60   -> 2, TTL still counting down from the first hit
        assert_eq!(increx(&mut c, "rate:user42", "60"), Reply::Int(2));
        assert_eq!(c.call(&["TTL", "rate:user42"]), Reply::Int(60));
        for expected in 3..=6 {
            assert_eq!(increx(&mut c, "rate:user42", "60"), Reply::Int(expected));
        }
        assert_eq!(c.call(&["GET", "rate:user42"]), bulk("6"));
    }
}

on_every_server! {
    fn missing_key_counts_one_and_arms_the_ttl(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let before = server_ms(&mut c);
        assert_eq!(increx(&mut c, "k", "30"), Reply::Int(1));
        let after = server_ms(&mut c);
        assert_expires_after(&mut c, "k", 30_000, before, after);
        assert_eq!(c.call(&["TYPE", "k"]), Reply::Status("string".into()));
    }
}

on_every_server! {
    fn counter_at_zero_rearms_and_replaces_any_ttl(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["SET", "k", "0", "EX", "1000"]);
        let before = server_ms(&mut c);
        assert_eq!(increx(&mut c, "k", "7"), Reply::Int(1));
        let after = server_ms(&mut c);
        assert_expires_after(&mut c, "k", 7_000, before, after);

        c.call(&["SET", "p", "0"]);
        assert_eq!(increx(&mut c, "p", "7"), Reply::Int(1));
        assert!(c.call(&["PTTL", "p"]).int() > 6000);
    }
}

on_every_server! {
    fn later_hits_leave_the_ttl_exactly_as_it_was(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        increx(&mut c, "k", "100");
        let armed_at = c.call(&["PEXPIRETIME", "k"]).int();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(increx(&mut c, "k", "5"), Reply::Int(2));
        assert_eq!(increx(&mut c, "k", "-1"), Reply::Int(3));
        assert_eq!(c.call(&["PEXPIRETIME", "k"]).int(), armed_at);

        // A counter without a TTL stays without one.
        c.call(&["SET", "plain", "41"]);
        assert_eq!(increx(&mut c, "plain", "10"), Reply::Int(42));
        assert_eq!(c.call(&["TTL", "plain"]), Reply::Int(-1));
        assert_eq!(c.call(&["GET", "plain"]), bulk("42"));
    }
}

on_every_server! {
    fn a_counter_that_grows_a_digit_keeps_its_ttl(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["SET", "k", "9", "PX", "100000"]);
        let at = c.call(&["PEXPIRETIME", "k"]).int();
        assert_eq!(increx(&mut c, "k", "5"), Reply::Int(10));
        c.call(&["SET", "n", "-10", "PX", "100000"]);
        assert_eq!(increx(&mut c, "n", "5"), Reply::Int(-9));
        assert_eq!(c.call(&["GET", "k"]), bulk("10"));
        assert_eq!(c.call(&["GET", "n"]), bulk("-9"));
        assert_eq!(c.call(&["PEXPIRETIME", "k"]).int(), at);
        assert!(c.call(&["PTTL", "n"]).int() > 90_000);
    }
}

on_every_server! {
    fn non_positive_seconds_delete_the_new_counter_at_once(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(increx(&mut c, "k", "0"), Reply::Int(1));
        assert_eq!(c.call(&["EXISTS", "k"]), Reply::Int(0));
        assert_eq!(increx(&mut c, "k", "-5"), Reply::Int(1));
        assert_eq!(c.call(&["EXISTS", "k"]), Reply::Int(0));
        c.call(&["SET", "z", "0", "EX", "100"]);
        assert_eq!(increx(&mut c, "z", "-1"), Reply::Int(1));
        assert_eq!(c.call(&["EXISTS", "z"]), Reply::Int(0));
    }
}

on_every_server! {
    fn bad_seconds_are_refused_before_anything_is_written(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["SET", "k", "3", "EX", "100"]);
        for seconds in ["abc", "1.5", " 5", "5 ", "0x10", "1e3", "", "nan", "+5", "9223372036854775808"] {
            assert_error_writes_nothing(&mut c, &["GOBLIN.INCREX", "k", seconds], "k", NOT_INTEGER);
            assert_error_writes_nothing(&mut c, &["GOBLIN.INCREX", "new", seconds], "new", NOT_INTEGER);
        }
    }
}

on_every_server! {
    fn non_integer_values_are_refused_before_anything_is_written(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for value in ["abc", "1.5", " 5", "5 ", "", "0x10", "1e3", "+1", "01", "-0"] {
            c.call(&["SET", "k", value, "EX", "100"]);
            assert_error_writes_nothing(&mut c, &["GOBLIN.INCREX", "k", "10"], "k", NOT_INTEGER);
        }
    }
}

on_every_server! {
    fn the_largest_counter_refuses_to_overflow(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["SET", "k", "9223372036854775807"]);
        assert_error_writes_nothing(
            &mut c,
            &["GOBLIN.INCREX", "k", "10"],
            "k",
            OVERFLOW,
        );
        c.call(&["SET", "m", "-9223372036854775808"]);
        assert_eq!(increx(&mut c, "m", "10"), Reply::Int(i64::MIN + 1));
    }
}

on_every_server! {
    fn an_expiry_past_the_clock_is_refused_not_immortal(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for seconds in ["9223372036854775807", "9223372036854775", "-9223372036854775808"] {
            assert_error_writes_nothing(&mut c, &["GOBLIN.INCREX", "k", seconds], "k", INCREX_INVALID_EXPIRE);
        }
        c.call(&["SET", "zero", "0"]);
        assert_error_writes_nothing(
            &mut c,
            &["GOBLIN.INCREX", "zero", "9223372036854775807"],
            "zero",
            INCREX_INVALID_EXPIRE,
        );
        // Only the first hit arms a TTL: a running counter ignores `seconds`.
        c.call(&["SET", "running", "5"]);
        assert_eq!(increx(&mut c, "running", "9223372036854775807"), Reply::Int(6));
    }
}

on_every_server! {
    fn other_types_are_wrongtype(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["ZADD", "z", "1", "a"]);
        c.call(&["HSET", "h", "f", "1"]);
        c.call(&["RPUSH", "l", "1"]);
        c.call(&["SADD", "s", "1"]);
        for key in ["z", "h", "l", "s"] {
            assert_error_writes_nothing(&mut c, &["GOBLIN.INCREX", key, "10"], key, WRONGTYPE);
        }
        // Syntax before type: a bad `seconds` on a zset is the integer error.
        assert_error_writes_nothing(&mut c, &["GOBLIN.INCREX", "z", "x"], "z", NOT_INTEGER);
    }
}

on_every_server! {
    fn wrong_arity_is_refused(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_error_writes_nothing(&mut c, &["GOBLIN.INCREX"], "k", INCREX_ARITY);
        assert_error_writes_nothing(&mut c, &["GOBLIN.INCREX", "k"], "k", INCREX_ARITY);
        assert_error_writes_nothing(&mut c, &["GOBLIN.INCREX", "k", "1", "2"], "k", INCREX_ARITY);
        assert_error_writes_nothing(&mut c, &["goblin.increx", "k", "1", "2"], "k", INCREX_ARITY);
    }
}

on_every_server! {
    /// INCR is the judge of what a counter is: for every stored value, INCREX must accept and
    /// compute what INCR does, or refuse with INCR's exact error.
    fn accepts_and_refuses_stored_values_exactly_as_incr(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let values = [
            "0", "1", "-1", "9", "99", "-10", "10000", "123456789", "9223372036854775806",
            "9223372036854775807", "-9223372036854775808", "-9223372036854775807", "00", "01",
            "-0", "+1", " 1", "1 ", "1\n", "1.0", "1e2", "0x1", "", "-", "a", "18446744073709551616",
            "99999999999999999999", "-99999999999999999999", "000000000000000000001",
        ];
        for value in values {
            c.call(&["SET", "via-incr", value]);
            c.call(&["SET", "via-increx", value]);
            let incr = c.call(&["INCR", "via-incr"]);
            let increx = increx(&mut c, "via-increx", "100");
            assert_eq!(increx, incr, "stored value {value:?}");
            assert_eq!(
                c.call(&["GET", "via-increx"]),
                c.call(&["GET", "via-incr"]),
                "stored value {value:?}"
            );
        }
    }
}
