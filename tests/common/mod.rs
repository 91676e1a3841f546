//! What integration tests add to the shared server kit: snapshots of a key, the dirty
//! counter, and one test per server.

#![allow(dead_code)]

pub use goblin_testkit::*;

/// Everything observable about one key: type, value, TTL class. Equal snapshots before and
/// after a call mean the call wrote nothing to that key.
pub fn snapshot(conn: &mut Conn, key: &str) -> (String, Reply, i64) {
    let kind = conn.call(&["TYPE", key]).status();
    let value = match kind.as_str() {
        "string" => conn.call(&["GET", key]),
        "zset" => conn.call(&["ZRANGE", key, "0", "-1", "WITHSCORES"]),
        "hash" => conn.call(&["HGETALL", key]),
        "list" => conn.call(&["LRANGE", key, "0", "-1"]),
        "set" => conn.call(&["SMEMBERS", key]),
        _ => Reply::Nil,
    };
    let ttl = conn.call(&["PEXPIRETIME", key]);
    let ttl = match ttl {
        Reply::Int(n) => n,
        // PEXPIRETIME is 7.0+; every server in scope has it.
        other => panic!("PEXPIRETIME: {other:?}"),
    };
    (kind, value, ttl)
}

/// `server.dirty`: every write and every replicated effect raises it. Unchanged across a call
/// means the call neither wrote nor propagated anything.
pub fn dirty(conn: &mut Conn) -> i64 {
    info_field(conn, "persistence", "rdb_changes_since_last_save")
        .parse()
        .expect("rdb_changes_since_last_save")
}

/// Asserts an error reply with exactly this text, and that the call changed nothing.
pub fn assert_error_writes_nothing(conn: &mut Conn, args: &[&str], key: &str, error: &str) {
    let before = snapshot(conn, key);
    let dirty_before = dirty(conn);
    let reply = conn.call(args);
    assert_eq!(reply, Reply::Error(error.to_string()), "{args:?}");
    assert_eq!(snapshot(conn, key), before, "{args:?} changed {key}");
    assert_eq!(
        dirty(conn),
        dirty_before,
        "{args:?} wrote or propagated something"
    );
}

/// Defines `mod $name { fn redis70(); fn redis82(); fn valkey91(); }`, one test per server,
/// each calling `$body(Flavor)`.
#[macro_export]
macro_rules! on_every_server {
    ($(#[$meta:meta])* fn $name:ident($flavor:ident: Flavor) $body:block) => {
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            fn run($flavor: Flavor) $body
            #[test]
            fn redis70() { run(Flavor::Redis70) }
            #[test]
            fn redis82() { run(Flavor::Redis82) }
            #[test]
            fn valkey91() { run(Flavor::Valkey91) }
        }
    };
}

/// Runs `calls` on `c` and returns the keyspace events they fired on `server`, in order, as
/// "event key" (notifications must already be enabled). A final `SET sentinel` marks the end.
pub fn keyspace_events(
    server: &Server,
    c: &mut Conn,
    calls: impl FnOnce(&mut Conn),
) -> Vec<String> {
    let mut sub = server.conn();
    sub.call(&["PSUBSCRIBE", "__keyevent@0__:*"]);
    calls(c);
    c.call(&["SET", "sentinel", "x"]);
    let mut events = Vec::new();
    loop {
        let message = sub.read().expect("pmessage").texts();
        if message[3] == "sentinel" {
            break;
        }
        let event = message[2].trim_start_matches("__keyevent@0__:");
        events.push(format!("{event} {}", message[3]));
    }
    events
}
