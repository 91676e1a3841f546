//! What integration tests add to the shared server kit: snapshots of a key, the dirty
//! counter, and one test per server.

#![allow(dead_code)]

pub use goblin_testkit::*;

/// The server's clock in milliseconds, from a `TIME` reply.
pub fn time_ms(time: &Reply) -> i64 {
    let time = time.texts();
    time[0].parse::<i64>().expect("seconds") * 1000 + time[1].parse::<i64>().expect("us") / 1000
}

/// The server's clock in milliseconds, now.
pub fn server_ms(conn: &mut Conn) -> i64 {
    time_ms(&conn.call(&["TIME"]))
}

/// Asserts the key's absolute expiry is `ttl_ms` after some instant in `[before, after]` (server
/// milliseconds read just before and just after the call that armed it).
pub fn assert_expires_after(conn: &mut Conn, key: &str, ttl_ms: i64, before: i64, after: i64) {
    let at = conn.call(&["PEXPIRETIME", key]).int();
    assert!(
        (before + ttl_ms..=after + ttl_ms).contains(&at),
        "{key} expires at {at}, expected {ttl_ms} ms after a call in [{before}, {after}]"
    );
}

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

/// Every file of the AOF in `dir`, as text.
pub fn aof_text(dir: &std::path::Path) -> String {
    let mut text = String::new();
    let aof_dir = dir.join("appendonlydir");
    let mut files: Vec<_> = std::fs::read_dir(&aof_dir)
        .expect("appendonlydir")
        .map(|entry| entry.expect("entry").path())
        .collect();
    files.sort();
    for path in files {
        text.push_str(&String::from_utf8_lossy(
            &std::fs::read(&path).expect("read aof"),
        ));
    }
    text
}

/// The commands of an AOF (or of any RESP command stream), in order.
pub fn aof_commands(aof: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut lines = aof.split("\r\n");
    while let Some(line) = lines.next() {
        let Some(count) = line.strip_prefix('*').and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        let mut command = Vec::with_capacity(count);
        for _ in 0..count {
            let _length = lines.next();
            command.push(lines.next().unwrap_or_default().to_string());
        }
        commands.push(command);
    }
    commands
}
