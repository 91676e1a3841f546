//! What integration tests add to the shared server kit (which has `snapshot`, `dataset`,
//! `server_ms` and `on_every_server!`): expiry and no-write assertions, the dirty counter,
//! keyspace events.

#![allow(dead_code)]

pub use goblin_testkit::*;

pub mod cluster;
mod commands;
mod errors;
mod rows;
mod table;
// Not every test binary runs a table.
#[allow(unused_imports)]
pub use commands::*;
#[allow(unused_imports)]
pub use errors::*;
#[allow(unused_imports)]
pub use rows::*;
#[allow(unused_imports)]
pub use table::*;

/// The first code block in `lang` after the heading `heading` of the doc at `page` (relative to
/// the repository): a snippet the docs show, to run as written.
pub fn doc_snippet(page: &str, heading: &str, lang: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(page);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{page}: {e}"));
    let after = text
        .split(&format!("\n{heading}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("{page}: no heading {heading:?}"));
    after
        .split(&format!("```{lang}\n"))
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap_or_else(|| panic!("{page}: no {lang} block after {heading:?}"))
        .to_string()
}

/// `GOBLIN.INCREX key seconds`.
pub fn increx(c: &mut Conn, key: &str, seconds: &str) -> Reply {
    c.call(&["GOBLIN.INCREX", key, seconds])
}

/// `GOBLIN.ZWINDOW key now window limit member`.
pub fn zwindow(
    c: &mut Conn,
    key: &str,
    now: &str,
    window: &str,
    limit: &str,
    member: &str,
) -> Reply {
    c.call(&["GOBLIN.ZWINDOW", key, now, window, limit, member])
}

/// `GOBLIN.CAD key value`.
pub fn cad(c: &mut Conn, key: &str, value: &str) -> Reply {
    c.call(&["GOBLIN.CAD", key, value])
}

/// A sorted set as `ZRANGE key 0 -1 WITHSCORES` lists it: member, score, member, score...
pub fn members(c: &mut Conn, key: &str) -> Vec<String> {
    c.call(&["ZRANGE", key, "0", "-1", "WITHSCORES"]).texts()
}

/// A bulk string reply.
pub fn bulk(text: &str) -> Reply {
    Reply::Bulk(text.as_bytes().to_vec())
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

/// Asserts that a load that failed (or a module the server unloaded) left no callback behind:
/// each event Goblin subscribes to fires once (CONFIG SET for the config change; writes,
/// deletions, an expiry, FLUSHDB and SWAPDB for the keyspace events its waiting lines follow),
/// and a subscription left behind would call into the unloaded library and crash the server.
/// It touches only the key `callbacks:probe` and database 9.
#[allow(dead_code)]
pub fn assert_no_callback_left(conn: &mut Conn) {
    for value in ["yes", "no"] {
        let reply = conn.call(&["CONFIG", "SET", "lazyfree-lazy-expire", value]);
        assert_eq!(reply, Reply::Status("OK".into()));
    }
    let probe = "callbacks:probe";
    for args in [
        &["SET", probe, "v"][..],
        &["DEL", probe],
        &["ZADD", probe, "1", "m"],
        &["ZREM", probe, "m"],
        &["SET", probe, "v", "PX", "1"],
    ] {
        conn.call(args);
    }
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(conn.call(&["GET", probe]), Reply::Nil, "expired on access");
    for args in [
        &["SWAPDB", "0", "9"][..],
        &["SWAPDB", "0", "9"],
        &["SELECT", "9"],
        &["FLUSHDB"],
        &["SELECT", "0"],
    ] {
        assert_eq!(conn.call(args), Reply::Status("OK".into()), "{args:?}");
    }
    assert_eq!(conn.call(&["PING"]), Reply::Status("PONG".into()));
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
    assert_writes_nothing(conn, args, key, &Reply::Error(error.to_string()));
}

/// Asserts exactly this reply, and that the call changed nothing: the key's snapshot and the
/// dirty counter are what they were.
pub fn assert_writes_nothing(conn: &mut Conn, args: &[&str], key: &str, expected: &Reply) {
    assert_writes_nothing_matching(conn, args, key, |reply| reply == expected);
}

/// Asserts a reply that `matches`, and that the call changed nothing.
pub fn assert_writes_nothing_matching(
    conn: &mut Conn,
    args: &[&str],
    key: &str,
    matches: impl Fn(&Reply) -> bool,
) {
    let before = snapshot(conn, key);
    let dirty_before = dirty(conn);
    let reply = conn.call(args);
    assert!(matches(&reply), "{args:?}: {reply:?}");
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

/// One step of both sides: the EXEC reply, and the server's clock (ms) just before MULTI and
/// just after EXEC.
pub struct Step {
    pub replies: Vec<Reply>,
    pub before_ms: i64,
    pub after_ms: i64,
}

/// Runs one step on both keys inside MULTI, so both see the same instant: the EXEC reply is
/// [lua reply, native reply, then `reads` on the Lua key and the native key].
pub fn side_by_side(
    c: &mut Conn,
    lua: Vec<String>,
    native: Vec<String>,
    reads: &[&[&str]],
    lua_key: &str,
    native_key: &str,
) -> Step {
    let mut commands: Vec<Vec<String>> =
        vec![vec!["TIME".into()], vec!["MULTI".into()], lua, native];
    for read in reads {
        for key in [lua_key, native_key] {
            let mut command: Vec<String> = read.iter().map(|s| s.to_string()).collect();
            command.insert(1, key.to_string());
            commands.push(command);
        }
    }
    commands.push(vec!["EXEC".into()]);
    commands.push(vec!["TIME".into()]);
    let replies = c.pipeline(&commands);
    let exec = &replies[replies.len() - 2];
    Step {
        replies: exec.array().to_vec(),
        before_ms: time_ms(&replies[0]),
        after_ms: time_ms(&replies[replies.len() - 1]),
    }
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

/// A key, and its type, value and TTL in milliseconds (`snapshot`).
pub type KeyAndState = (String, (String, Reply, i64));

/// A primary with the module and an AOF fsynced at every write, followed by a replica without
/// the module: the servers of a test that proves what replicas and the AOF keep. (The primary
/// is killed and restarted from its AOF, so it brings its own replica instead of replica
/// mode's.)
pub struct PersistedPair {
    pub primary: Server,
    pub replica: Server,
    pub dir: TempDir,
}

impl PersistedPair {
    pub fn start(flavor: Flavor, name: &str) -> PersistedPair {
        PersistedPair::start_with(flavor, name, &[], &[])
    }

    /// As `start`, with settings of the primary's own and the replica's own.
    pub fn start_with(
        flavor: Flavor,
        name: &str,
        primary_args: &[&str],
        replica_args: &[&str],
    ) -> PersistedPair {
        let dir = TempDir::new(name);
        let primary = Server::builder(flavor)
            .dir(&dir.0)
            .args(AOF_ALWAYS)
            .args(primary_args.iter().copied())
            .without_replica()
            .start();
        let replica = Server::builder(flavor)
            .without_module()
            .without_replica()
            .args(replica_args.iter().copied())
            .start();
        replica.follow(&primary);
        PersistedPair {
            primary,
            replica,
            dir,
        }
    }

    /// The keys matching `pattern` with their type, value and TTL, once the replica has
    /// caught up (`caught_up`): the replica (without the module) must hold the same, and never have met a
    /// command it does not know; then the primary is killed and a server without the module,
    /// restarted from its AOF, must hold them too. Returns them, and the AOF's text.
    pub fn check(self, pattern: &str) -> (Vec<KeyAndState>, String) {
        let keys = |c: &mut Conn| {
            let mut keys = c.call(&["KEYS", pattern]).texts();
            keys.sort();
            keys.into_iter()
                .map(|key| {
                    let state = snapshot(c, &key);
                    (key, state)
                })
                .collect::<Vec<_>>()
        };
        let mut p = self.primary.conn();
        if let Err(missing) = caught_up(&mut p, &mut self.replica.conn()) {
            panic!("{missing}");
        }
        let on_primary = keys(&mut p);
        assert_eq!(keys(&mut self.replica.conn()), on_primary, "the replica");
        assert!(!self.replica.log().contains("Unknown command"));
        let aof = aof_text(&self.dir.0);
        drop(p);
        let (mut primary, flavor) = (self.primary, self.replica.flavor);
        primary.kill();
        let restarted = Server::builder(flavor)
            .dir(&self.dir.0)
            .args(AOF_ALWAYS)
            .without_module()
            .without_replica()
            .start();
        assert_eq!(
            keys(&mut restarted.conn()),
            on_primary,
            "a restart from the AOF, even without the module"
        );
        (on_primary, aof)
    }
}
