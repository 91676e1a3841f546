//! GOBLIN.INCREX against real servers: its page's rows (run in tests/tables.rs), the
//! documented session, the edges that span rows, and INCR's own parser as the judge of what a counter
//! is.

mod common;
use common::*;

on_every_server! {
    fn the_documented_fixed_window(flavor: Flavor) {
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
            assert_error_writes_nothing(&mut c, &["GOBLIN.INCREX", "k", seconds], "k", GOBLIN_INCREX_INVALID_EXPIRE);
        }
        c.call(&["SET", "zero", "0"]);
        assert_error_writes_nothing(
            &mut c,
            &["GOBLIN.INCREX", "zero", "9223372036854775807"],
            "zero",
            GOBLIN_INCREX_INVALID_EXPIRE,
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
