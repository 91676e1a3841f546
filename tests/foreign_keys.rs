//! A key of another type at a name Goblin writes beside the one a command names: the keys that
//! keep fencing tokens (the key's latest; a lease holder's or a reader's own). Any client that
//! may write the key's hash tag can make one by hand. On every server, for every command that
//! would write there and every type: the command refuses before it writes anything, with the
//! error that names the key; a waiter whose turn comes is answered that error, and the line goes
//! on to the next; a release leaves the foreign key as it is; and no internal error is ever
//! answered or logged.

mod common;
use common::*;
use std::time::Duration;

/// The key every case locks, with a hash tag (FENCE needs one).
const KEY: &str = "{f}k";
/// Where the key's latest fencing token is kept.
const LATEST: &str = "{f}\0goblin:fence\0{f}k";

/// Where the token of the key's lease holder or reader `holder` is kept.
fn own(holder: &str) -> String {
    format!("{LATEST}\0{holder}")
}

/// Each type a client can plant, as the command that writes it.
const FOREIGN: &[&[&str]] = &[
    &["RPUSH", "", "x"],
    &["SADD", "", "x"],
    &["HSET", "", "f", "v"],
    &["ZADD", "", "1", "x"],
    &["XADD", "", "*", "f", "v"],
];

/// Writes a key of the type `planter` makes at `name`.
fn plant(c: &mut Conn, planter: &[&str], name: &str) {
    let mut args: Vec<&str> = planter.to_vec();
    args[1] = name;
    let reply = c.call(&args);
    assert!(!reply.is_error(), "{args:?}: {reply:?}");
}

fn ok() -> Reply {
    Reply::Status("OK".into())
}

fn err(text: &str) -> Reply {
    Reply::Error(text.to_string())
}

/// Asserts that `call` is refused with `error` and changes nothing at all: the whole dataset and
/// the dirty counter are as they were.
fn refused_writing_nothing(c: &mut Conn, call: &[&str], error: &str) {
    let before = dataset(c);
    let dirty_before = dirty(c);
    assert_eq!(c.call(call), err(error), "{call:?}");
    assert_eq!(dirty(c), dirty_before, "{call:?} wrote");
    assert_eq!(dataset(c), before, "{call:?} changed the data");
}

fn no_internal_error(server: &Server) {
    let log = server.log();
    assert!(!log.contains("internal error"), "{log}");
}

/// The calls that ask for a token to be kept at `LATEST` (and, for a lease holder or a reader,
/// at its own name): each with what must be in place first, and which names it keeps a token
/// at.
struct Case {
    setup: &'static [&'static [&'static str]],
    call: &'static [&'static str],
    /// The holder whose own token the call keeps, beside the key's latest.
    holder: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        setup: &[],
        call: &["GOBLIN.LOCK", KEY, "w", "60000", "FENCE"],
        holder: None,
    },
    Case {
        setup: &[],
        call: &["GOBLIN.BLOCK", KEY, "w", "60000", "0", "FENCE"],
        holder: None,
    },
    Case {
        setup: &[&["GOBLIN.LOCK", KEY, "w", "60000"]],
        call: &["GOBLIN.EXTEND", KEY, "w", "1000", "FENCE"],
        holder: None,
    },
    Case {
        setup: &[],
        call: &["GOBLIN.ZWINDOW", KEY, "*", "60", "2", "m", "FENCE"],
        holder: Some("m"),
    },
    Case {
        setup: &[],
        call: &["GOBLIN.BZWINDOW", KEY, "60", "2", "m", "0", "FENCE"],
        holder: Some("m"),
    },
    Case {
        setup: &[],
        call: &["GOBLIN.RLOCK", KEY, "r", "60000", "FENCE"],
        holder: Some("r"),
    },
    Case {
        setup: &[],
        call: &["GOBLIN.BRLOCK", KEY, "r", "60000", "0", "FENCE"],
        holder: Some("r"),
    },
    Case {
        setup: &[],
        call: &["GOBLIN.WLOCK", KEY, "w", "60000", "FENCE"],
        holder: None,
    },
    Case {
        setup: &[],
        call: &["GOBLIN.BWLOCK", KEY, "w", "60000", "0", "FENCE"],
        holder: None,
    },
    Case {
        setup: &[&["GOBLIN.WLOCK", KEY, "w", "60000"]],
        call: &["GOBLIN.RWEXTEND", KEY, "w", "1000", "FENCE"],
        holder: None,
    },
    Case {
        setup: &[&["GOBLIN.RLOCK", KEY, "r", "60000"]],
        call: &["GOBLIN.RWEXTEND", KEY, "r", "1000", "FENCE"],
        holder: Some("r"),
    },
    // A writer demoted, and a reader promoted: each keeps a token as a new holder.
    Case {
        setup: &[&["GOBLIN.WLOCK", KEY, "w", "60000"]],
        call: &["GOBLIN.RLOCK", KEY, "w", "60000", "FENCE"],
        holder: Some("w"),
    },
    Case {
        setup: &[&["GOBLIN.RLOCK", KEY, "r", "60000"]],
        call: &["GOBLIN.WLOCK", KEY, "r", "60000", "FENCE"],
        holder: None,
    },
];

on_every_server! {
    /// Every command that keeps a token refuses, writing nothing, when a key of another type
    /// stands where it would keep it: the key's latest token's name, and the holder's own.
    fn a_key_of_another_type_where_a_token_is_kept_refuses_the_grant(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let mut refusals = 0;
        for case in CASES {
            let mut names = vec![(LATEST.to_string(), FENCE_LATEST_WRONG_TYPE)];
            if let Some(holder) = case.holder {
                names.push((own(holder), FENCE_OWN_WRONG_TYPE));
            }
            for (name, error) in &names {
                for planter in FOREIGN {
                    c.call(&["FLUSHALL"]);
                    for setup in case.setup {
                        assert!(!c.call(setup).is_error(), "{setup:?}");
                    }
                    plant(&mut c, planter, name);
                    refused_writing_nothing(&mut c, case.call, error);
                    refusals += 1;
                }
            }
            // Without FENCE, the same call keeps no token and writes nothing there.
            c.call(&["FLUSHALL"]);
            for setup in case.setup {
                c.call(setup);
            }
            for (name, _) in &names {
                plant(&mut c, FOREIGN[0], name);
            }
            let plain: Vec<&str> = case.call.iter().copied().filter(|arg| *arg != "FENCE").collect();
            assert!(!c.call(&plain).is_error(), "{plain:?}");
            for (name, _) in &names {
                assert_eq!(c.call(&["TYPE", name]), Reply::Status("list".into()), "{plain:?}");
            }
        }
        assert_eq!(refusals, 5 * (CASES.len() + CASES.iter().filter(|case| case.holder.is_some()).count()));
        no_internal_error(&server);
    }
}

on_every_server! {
    /// A string of another shape where a token is kept is the module's own name, written as SET
    /// would write it: the grant goes on, and mints a token.
    fn a_string_of_another_shape_where_a_token_is_kept_is_written_over(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["SET", LATEST, "not a token"]);
        let token = c.call(&["GOBLIN.LOCK", KEY, "w", "60000", "FENCE"]);
        assert!(matches!(token, Reply::Int(t) if t > 0), "{token:?}");
        assert!(c.call(&["GET", LATEST]).text().starts_with(&token.int().to_string()));
        no_internal_error(&server);
    }
}

on_every_server! {
    /// A release gives a holder's token back only from a string of the module's own: a key of
    /// another type at its name stays as it is, and the release goes on.
    fn a_release_leaves_a_key_of_another_type_where_a_token_was_kept(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        // A lease of the window, given back.
        c.call(&["GOBLIN.ZWINDOW", KEY, "*", "60", "2", "m"]);
        plant(&mut c, FOREIGN[2], &own("m"));
        assert_eq!(c.call(&["GOBLIN.CAD", KEY, "m"]), Reply::Int(1));
        assert_eq!(c.call(&["TYPE", &own("m")]), Reply::Status("hash".into()));
        // A reader, given back.
        c.call(&["DEL", KEY]);
        assert_eq!(c.call(&["GOBLIN.RLOCK", KEY, "r", "60000"]), ok());
        plant(&mut c, FOREIGN[0], &own("r"));
        assert_eq!(c.call(&["GOBLIN.RWUNLOCK", KEY, "r"]), Reply::Int(1));
        assert_eq!(c.call(&["TYPE", &own("r")]), Reply::Status("list".into()));
        // The last reader promoted.
        assert_eq!(c.call(&["GOBLIN.RLOCK", KEY, "p", "60000"]), ok());
        plant(&mut c, FOREIGN[1], &own("p"));
        assert_eq!(c.call(&["GOBLIN.WLOCK", KEY, "p", "60000"]), ok());
        assert_eq!(c.call(&["GET", KEY]), bulk("p"));
        assert_eq!(c.call(&["TYPE", &own("p")]), Reply::Status("set".into()));
        no_internal_error(&server);
    }
}

/// The blocking acquires that wait with FENCE, and how each key's holder is let go.
struct Line {
    hold: &'static [&'static str],
    release: &'static [&'static str],
    /// The waiter that asks for a token, then one that does not, behind it.
    fenced: &'static [&'static str],
    plain: &'static [&'static str],
    /// Its reply once served: OK, or 1 for a lease.
    granted: fn() -> Reply,
    /// The waiter whose own token would be kept too, if any.
    holder: Option<&'static str>,
    /// A newcomer that does not wait, for what the plain waiter waits for.
    newcomer: &'static [&'static str],
}

const LINES: &[Line] = &[
    Line {
        hold: &["GOBLIN.LOCK", KEY, "h", "60000"],
        release: &["GOBLIN.CAD", KEY, "h"],
        fenced: &["GOBLIN.BLOCK", KEY, "w1", "60000", "0", "FENCE"],
        plain: &["GOBLIN.BLOCK", KEY, "w2", "60000", "0"],
        granted: ok,
        holder: None,
        newcomer: &["GOBLIN.LOCK", KEY, "n", "60000"],
    },
    Line {
        hold: &["GOBLIN.ZWINDOW", KEY, "*", "60", "1", "h"],
        release: &["GOBLIN.CAD", KEY, "h"],
        fenced: &["GOBLIN.BZWINDOW", KEY, "60", "1", "w1", "0", "FENCE"],
        plain: &["GOBLIN.BZWINDOW", KEY, "60", "1", "w2", "0"],
        granted: || Reply::Int(1),
        holder: Some("w1"),
        newcomer: &["GOBLIN.ZWINDOW", KEY, "*", "60", "1", "n"],
    },
    Line {
        hold: &["GOBLIN.WLOCK", KEY, "h", "60000"],
        release: &["GOBLIN.RWUNLOCK", KEY, "h"],
        fenced: &["GOBLIN.BWLOCK", KEY, "w1", "60000", "0", "FENCE"],
        plain: &["GOBLIN.BWLOCK", KEY, "w2", "60000", "0"],
        granted: ok,
        holder: None,
        newcomer: &["GOBLIN.WLOCK", KEY, "n", "60000"],
    },
    Line {
        hold: &["GOBLIN.WLOCK", KEY, "h", "60000"],
        release: &["GOBLIN.RWUNLOCK", KEY, "h"],
        fenced: &["GOBLIN.BRLOCK", KEY, "w1", "60000", "0", "FENCE"],
        plain: &["GOBLIN.BWLOCK", KEY, "w2", "60000", "0"],
        granted: ok,
        holder: Some("w1"),
        newcomer: &["GOBLIN.WLOCK", KEY, "n", "60000"],
    },
];

fn waiting(c: &mut Conn) -> i64 {
    info_field(c, "goblin", "goblin_waiting").parse().unwrap()
}

on_every_server! {
    /// In line: the waiter whose turn comes and whose token cannot be kept is answered the
    /// error, nothing is written for it, and the next in line is served at once.
    fn a_waiter_whose_token_cannot_be_kept_is_answered_and_the_line_goes_on(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for line in LINES {
            let mut names = vec![(LATEST.to_string(), FENCE_LATEST_WRONG_TYPE)];
            if let Some(holder) = line.holder {
                names.push((own(holder), FENCE_OWN_WRONG_TYPE));
            }
            for (name, error) in &names {
                c.call(&["FLUSHALL"]);
                assert!(!c.call(line.hold).is_error(), "{:?}", line.hold);
                let mut fenced = server.conn();
                fenced.send(line.fenced).expect("send");
                assert!(wait_until(Duration::from_secs(10), || waiting(&mut c) == 1));
                let mut plain = server.conn();
                plain.send(line.plain).expect("send");
                assert!(wait_until(Duration::from_secs(10), || waiting(&mut c) == 2));
                plant(&mut c, FOREIGN[0], name);
                assert_eq!(c.call(line.release), Reply::Int(1), "{:?}", line.release);
                let answered = fenced.reply_within(Duration::from_secs(10));
                assert_eq!(answered, Some(err(error)), "{:?}", line.fenced);
                let served = plain.reply_within(Duration::from_secs(10));
                assert_eq!(served, Some((line.granted)()), "{:?}", line.plain);
                assert_eq!(waiting(&mut c), 0);
                // Nothing was written for the fenced waiter: the key is the plain one's.
                let holds = match c.call(&["TYPE", KEY]).status().as_str() {
                    "string" => vec![c.call(&["GET", KEY]).text()],
                    _ => c.call(&["ZRANGE", KEY, "0", "-1"]).texts(),
                };
                assert_eq!(holds, ["w2"], "{:?}", line.fenced);
                assert_eq!(c.call(&["TYPE", name]), Reply::Status("list".into()));
            }
        }
        no_internal_error(&server);
    }
}

on_every_server! {
    /// Two waiters in a row whose grants cannot be made, then one whose grant can, and a
    /// newcomer that does not wait in the same transaction as the release: both refused waiters
    /// are answered, the third is served, and the newcomer never finds the key free before it
    /// (a refusal once left the rest of the line to a look of its own, after the newcomer).
    fn after_waiters_refused_in_a_row_the_next_is_served_before_any_newcomer(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for line in LINES {
            c.call(&["FLUSHALL"]);
            assert!(!c.call(line.hold).is_error(), "{:?}", line.hold);
            let second: Vec<&str> = line.fenced.iter().map(|arg| if *arg == "w1" { "w3" } else { arg }).collect();
            let mut fenced = Vec::new();
            for (n, call) in [line.fenced, second.as_slice()].into_iter().enumerate() {
                let mut conn = server.conn();
                conn.send(call).expect("send");
                assert!(wait_until(Duration::from_secs(10), || waiting(&mut c) == n as i64 + 1));
                fenced.push(conn);
            }
            let mut plain = server.conn();
            plain.send(line.plain).expect("send");
            assert!(wait_until(Duration::from_secs(10), || waiting(&mut c) == 3));
            plant(&mut c, FOREIGN[0], LATEST);
            c.call(&["MULTI"]);
            c.call(line.release);
            c.call(line.newcomer);
            let exec = c.call(&["EXEC"]);
            assert_eq!(exec.array().first(), Some(&Reply::Int(1)), "{:?}: {exec:?}", line.release);
            for (conn, call) in fenced.iter_mut().zip([line.fenced, second.as_slice()]) {
                let answered = conn.reply_within(Duration::from_secs(10));
                assert_eq!(answered, Some(err(FENCE_LATEST_WRONG_TYPE)), "{call:?}");
            }
            let served = plain.reply_within(Duration::from_secs(10));
            assert_eq!(served, Some((line.granted)()), "{:?} after {:?}", line.plain, line.newcomer);
            assert_eq!(waiting(&mut c), 0);
            let holds = match c.call(&["TYPE", KEY]).status().as_str() {
                "string" => vec![c.call(&["GET", KEY]).text()],
                _ => c.call(&["ZRANGE", KEY, "0", "-1"]).texts(),
            };
            assert_eq!(holds, ["w2"], "{:?}: the newcomer went first ({exec:?})", line.newcomer);
        }
        no_internal_error(&server);
    }
}
