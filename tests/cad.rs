//! GOBLIN.CAD: whole lock and semaphore lifecycles (its page's rows run in tests/tables.rs).

mod common;
use common::*;

on_every_server! {
    fn comparison_is_binary_safe(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let token: &[u8] = b"\x00\xfftok\r\nen";
        c.call(&[&b"SET"[..], b"lock", token]);
        assert_eq!(c.call(&[&b"GOBLIN.CAD"[..], b"lock", b"\x00\xfftok\r\neN"]), Reply::Int(0));
        assert_eq!(c.call(&[&b"GOBLIN.CAD"[..], b"lock", token]), Reply::Int(1));
        c.call(&["SET", "empty", ""]);
        assert_eq!(cad(&mut c, "empty", "x"), Reply::Int(0));
        assert_eq!(cad(&mut c, "empty", ""), Reply::Int(1));
    }
}

on_every_server! {
    fn a_sorted_set_member_is_removed(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["ZADD", "sem", "1", "a", "2", "b"]);
        c.call(&["EXPIRE", "sem", "100"]);
        assert_eq!(cad(&mut c, "sem", "a"), Reply::Int(1));
        assert_eq!(c.call(&["ZRANGE", "sem", "0", "-1"]).texts(), ["b"]);
        assert_eq!(c.call(&["TTL", "sem"]), Reply::Int(100), "the other holders keep their TTL");
        assert_eq!(cad(&mut c, "sem", "a"), Reply::Int(0));
        assert_eq!(cad(&mut c, "sem", "b"), Reply::Int(1));
        assert_eq!(c.call(&["EXISTS", "sem"]), Reply::Int(0), "an emptied set is deleted");
    }
}

on_every_server! {
    fn missing_keys_and_other_types(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let dirty_before = dirty(&mut c);
        assert_eq!(cad(&mut c, "nothing", "x"), Reply::Int(0));
        assert_eq!(c.call(&["EXISTS", "nothing"]), Reply::Int(0));
        assert_eq!(dirty(&mut c), dirty_before);
        c.call(&["HSET", "h", "x", "1"]);
        c.call(&["RPUSH", "l", "x"]);
        c.call(&["SADD", "s", "x"]);
        for key in ["h", "l", "s"] {
            assert_error_writes_nothing(&mut c, &["GOBLIN.CAD", key, "x"], key, WRONGTYPE);
        }
        assert_error_writes_nothing(&mut c, &["GOBLIN.CAD", "k"], "k", GOBLIN_CAD_ARITY);
        // A third argument is an option (`PERMITS n`): another word is a syntax error.
        assert_error_writes_nothing(&mut c, &["GOBLIN.CAD", "k", "v", "w"], "k", SYNTAX);
    }
}

on_every_server! {
    fn a_zwindow_mutex_released_by_its_holder_is_taken_at_once(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(zwindow(&mut c, "lock:job7", "5000", "30", "1", "worker-1"), Reply::Int(1));
        assert_eq!(zwindow(&mut c, "lock:job7", "5001", "30", "1", "worker-2"), Reply::Int(0));
        // A non-holder cannot release it; the holder keeps the lock.
        assert_eq!(cad(&mut c, "lock:job7", "worker-2"), Reply::Int(0));
        assert_eq!(zwindow(&mut c, "lock:job7", "5002", "30", "1", "worker-3"), Reply::Int(0));
        // The holder releases it, and the next caller has it at once, long before the lease
        // would have aged out (5030).
        assert_eq!(cad(&mut c, "lock:job7", "worker-1"), Reply::Int(1));
        assert_eq!(zwindow(&mut c, "lock:job7", "5003", "30", "1", "worker-2"), Reply::Int(1));
        assert_eq!(c.call(&["ZRANGE", "lock:job7", "0", "-1"]).texts(), ["worker-2"]);
    }
}

on_every_server! {
    fn a_set_nx_px_lock_is_released_only_with_its_token(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(c.call(&["SET", "lock:report", "a1b2", "NX", "PX", "30000"]), Reply::Status("OK".into()));
        assert_eq!(c.call(&["SET", "lock:report", "c3d4", "NX", "PX", "30000"]), Reply::Nil);
        assert_eq!(cad(&mut c, "lock:report", "c3d4"), Reply::Int(0));
        assert_eq!(c.call(&["GET", "lock:report"]), bulk("a1b2"));
        assert_eq!(cad(&mut c, "lock:report", "a1b2"), Reply::Int(1));
        assert_eq!(c.call(&["SET", "lock:report", "c3d4", "NX", "PX", "30000"]), Reply::Status("OK".into()));
    }
}

on_every_server! {
    fn a_semaphore_of_three_with_one_permit_given_back_early(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for (now, worker) in [("1", "w1"), ("2", "w2"), ("3", "w3")] {
            assert_eq!(zwindow(&mut c, "sem:db", now, "60", "3", worker), Reply::Int(1));
        }
        assert_eq!(zwindow(&mut c, "sem:db", "4", "60", "3", "w4"), Reply::Int(0));
        assert_eq!(cad(&mut c, "sem:db", "w2"), Reply::Int(1));
        assert_eq!(zwindow(&mut c, "sem:db", "5", "60", "3", "w4"), Reply::Int(1));
        assert_eq!(zwindow(&mut c, "sem:db", "6", "60", "3", "w5"), Reply::Int(0));
        assert_eq!(c.call(&["ZCARD", "sem:db"]), Reply::Int(3));
    }
}

on_every_server! {
    fn releases_replicate_as_del_and_zrem_and_notify(flavor: Flavor) {
        let primary = Server::start(flavor);
        // Replica mode's replica: without the module.
        let replica = primary.replica().expect("replica mode");
        let mut p = primary.conn();
        let mut r = replica.conn();
        p.call(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
        let events = keyspace_events(&primary, &mut p, |p| {
            p.call(&["SET", "lock", "t"]);
            p.call(&["ZADD", "sem", "1", "a", "2", "b"]);
            assert_eq!(cad(p, "lock", "t"), Reply::Int(1));
            assert_eq!(cad(p, "sem", "a"), Reply::Int(1));
            assert_eq!(cad(p, "sem", "b"), Reply::Int(1));
        });
        assert_eq!(events, ["set lock", "zadd sem", "del lock", "zrem sem", "zrem sem", "del sem"]);
        assert_eq!(p.call(&["WAIT", "1", "5000"]), Reply::Int(1));
        assert_eq!(r.call(&["DBSIZE"]), Reply::Int(1), "only the sentinel is left on the replica");
    }
}

/// On Valkey 9.1 the server has its own compare-and-delete for strings: both must agree.
#[test]
fn agrees_with_valkey_delifeq_on_strings() {
    let server = Server::start(Flavor::Valkey91);
    let mut c = server.conn();
    let cases: [(Option<&str>, &str); 6] = [
        (Some("token"), "token"),
        (Some("token"), "other"),
        (Some("12345"), "12345"),
        (Some(""), ""),
        (Some("token"), "TOKEN"),
        (None, "token"),
    ];
    for (stored, value) in cases {
        for key in ["via-cad", "via-delifeq"] {
            c.call(&["DEL", key]);
            if let Some(stored) = stored {
                c.call(&["SET", key, stored, "PX", "60000"]);
            }
        }
        let native = c.call(&["DELIFEQ", "via-delifeq", value]);
        let goblin = cad(&mut c, "via-cad", value);
        assert_eq!(goblin, native, "stored {stored:?}, value {value:?}");
        assert_eq!(
            c.call(&["EXISTS", "via-cad"]),
            c.call(&["EXISTS", "via-delifeq"])
        );
    }
    c.call(&["SADD", "set", "x"]);
    assert_eq!(
        cad(&mut c, "set", "x"),
        c.call(&["DELIFEQ", "set", "x"]),
        "both refuse other types"
    );
}
