//! What a client and an operator see of each stand-in besides its replies, against the native
//! command: `COMMAND INFO` (arity, flags, key positions and key specs, ACL categories),
//! `COMMAND DOCS`, keyspace events (`new` and `keymiss` included), and what ACL key permissions
//! allow. The natives are Redis 8.10's INCREX, DELEX and DIGEST and Valkey 9.1's DELIFEQ.

mod common;
use common::*;

/// Each stand-in and the server whose own command it follows.
const STAND_INS: &[(&str, Flavor)] = &[
    ("increx", Flavor::Redis810),
    ("delex", Flavor::Redis810),
    ("digest", Flavor::Redis810),
    ("delifeq", Flavor::Valkey91),
];

/// `COMMAND INFO name`, without what no module command can match: the `module` flag, and the
/// `movablekeys` that a command whose key flags depend on the call (DELEX) gets from
/// answering the server's key-position requests itself.
fn command_info(c: &mut Conn, name: &str, with_categories: bool) -> Vec<Reply> {
    let info = c.call(&["COMMAND", "INFO", name]).array()[0]
        .array()
        .to_vec();
    let mut info = info;
    info[2] = Reply::Array(
        info[2]
            .array()
            .iter()
            .filter(|flag| !["module", "movablekeys"].contains(&flag.text().as_str()))
            .cloned()
            .collect(),
    );
    if !with_categories {
        info[6] = Reply::Nil;
    }
    info
}

/// `COMMAND DOCS name` as a map, without `group` (always `module` for a module command) and
/// `module`.
fn command_docs(c: &mut Conn, name: &str) -> Vec<(String, Reply)> {
    let docs = c.call(&["COMMAND", "DOCS", name]);
    let fields = docs.array()[1].array();
    fields
        .chunks(2)
        .map(|pair| (pair[0].text(), pair[1].clone()))
        .filter(|(field, _)| field != "group" && field != "module")
        .collect()
}

on_every_server! {
    fn command_info_and_docs_match_the_native_commands(flavor: Flavor) {
        let subject = Server::start(flavor);
        let mut goblin = subject.conn();
        for &(name, native_flavor) in STAND_INS {
            let reference = Server::builder(native_flavor).without_module().start();
            let mut native = reference.conn();
            let with_categories = flavor.has_module_acl_categories();
            assert_eq!(
                command_info(&mut goblin, name, with_categories),
                command_info(&mut native, name, with_categories),
                "COMMAND INFO {name}"
            );
            if flavor.version() >= (7, 2) || flavor.family() == Family::Valkey {
                assert_eq!(command_docs(&mut goblin, name), command_docs(&mut native, name), "COMMAND DOCS {name}");
            }
        }
    }
}

/// Calls whose events are compared: a preset, then the call.
const EVENT_CASES: &[(&[&[&str]], &[&str])] = &[
    (&[], &["INCREX", "k"]),
    (
        &[&["SET", "k", "5", "EX", "100"]],
        &["INCREX", "k", "BYINT", "2"],
    ),
    (
        &[&["SET", "k", "5", "EX", "100"]],
        &["INCREX", "k", "BYFLOAT", "1.5", "PERSIST"],
    ),
    (&[&["SET", "k", "5"]], &["INCREX", "k", "EX", "100"]),
    (&[&["SET", "k", "5"]], &["INCREX", "k", "PXAT", "1"]),
    (&[], &["INCREX", "k", "EXAT", "1"]),
    (&[&["SET", "k", "5"]], &["INCREX", "k", "UBOUND", "3"]),
    (
        &[&["SET", "k", "5", "EX", "100"]],
        &["INCREX", "k", "EX", "10", "ENX"],
    ),
    (&[&["SET", "k", "v"]], &["DELEX", "k"]),
    (&[], &["DELEX", "k"]),
    (&[&["SET", "k", "v"]], &["DELEX", "k", "IFEQ", "v"]),
    (&[&["SET", "k", "v"]], &["DELEX", "k", "IFNE", "v"]),
    (&[], &["DELEX", "k", "IFEQ", "v"]),
    (&[&["RPUSH", "k", "a"]], &["DELEX", "k", "IFEQ", "v"]),
    (&[&["SET", "k", "v"]], &["DIGEST", "k"]),
    (&[], &["DIGEST", "k"]),
    (&[&["SET", "k", "v"]], &["DELIFEQ", "k", "v"]),
    (&[&["SET", "k", "v"]], &["DELIFEQ", "k", "w"]),
    (&[], &["DELIFEQ", "k", "v"]),
];

fn events(server: &Server, preset: &[&[&str]], call: &[&str]) -> Vec<String> {
    let mut c = server.conn();
    c.call(&["FLUSHALL"]);
    c.call(&["CONFIG", "SET", "notify-keyspace-events", "KEAmn"]);
    for command in preset {
        c.call(command);
    }
    keyspace_events(server, &mut c, |c| {
        c.call(call);
    })
}

on_every_server! {
    fn keyspace_events_match_the_native_commands(flavor: Flavor) {
        let subject = Server::start(flavor);
        let redis = Server::builder(Flavor::Redis810).without_module().start();
        let valkey = Server::builder(Flavor::Valkey91).without_module().start();
        for (preset, call) in EVENT_CASES {
            let native = if call[0] == "DELIFEQ" { &valkey } else { &redis };
            assert_eq!(events(&subject, preset, call), events(native, preset, call), "{preset:?} {call:?}");
        }
    }
}

/// Users with read-only, write-only and full permission on keys `k*`.
const USERS: &[(&str, &str)] = &[("reader", "%R~k*"), ("writer", "%W~k*"), ("owner", "~k*")];

const ACL_CASES: &[&[&str]] = &[
    &["INCREX", "k"],
    &["DELEX", "k"],
    &["DELEX", "k", "IFEQ", "v"],
    &["DIGEST", "k"],
    &["DELIFEQ", "k", "v"],
];

fn acl_outcomes(server: &Server) -> Vec<String> {
    let mut admin = server.conn();
    for (user, keys) in USERS {
        admin.call(&["ACL", "SETUSER", user, "on", "nopass", keys, "+@all"]);
    }
    let mut outcomes = Vec::new();
    for (user, _) in USERS {
        let mut c = server.conn();
        c.call(&["AUTH", user, "x"]);
        for call in ACL_CASES {
            admin.call(&["SET", "k", "v"]);
            let outcome = match c.call(call) {
                Reply::Error(e) if e.starts_with("NOPERM") => "NOPERM".to_string(),
                _ => "allowed".to_string(),
            };
            outcomes.push(format!("{user} {call:?}: {outcome}"));
        }
    }
    outcomes
}

on_every_server! {
    fn key_permissions_allow_what_they_allow_natively(flavor: Flavor) {
        let subject = Server::start(flavor);
        let redis = Server::builder(Flavor::Redis810).without_module().start();
        let valkey = Server::builder(Flavor::Valkey91).without_module().start();
        let goblin = acl_outcomes(&subject);
        let (on_redis, on_valkey) = (acl_outcomes(&redis), acl_outcomes(&valkey));
        for (i, outcome) in goblin.iter().enumerate() {
            let native = if outcome.contains("DELIFEQ") { &on_valkey[i] } else { &on_redis[i] };
            assert_eq!(outcome, native);
        }
    }
}
