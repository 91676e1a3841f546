//! A waiter that leaves as it is granted: its grant is its own only once the server has written
//! the reply out to it. On every server, for every blocking acquire (GOBLIN.BLOCK,
//! GOBLIN.BZWINDOW, GOBLIN.BRLOCK, GOBLIN.BWLOCK), the waiter's connection goes at each moment
//! around its grant, placed deterministically: killed in the very transaction that frees the key;
//! closed while the server is stopped, after the release reached it or before; and, as a
//! control, closed after it read its grant. Where the reply never went out, the grant is taken
//! back, the next in line is served at once, and nothing is left held; where it went out, the
//! grant stays its holder's.

mod common;
use common::*;
use std::time::Duration;

const KEY: &str = "{l}k";
const LONG: Duration = Duration::from_secs(10);

/// One blocking acquire: how the key is held first and let go, the waiter that leaves (`w1`) and
/// the one behind it (`w2`), which the first's grant would hold back.
struct Acquire {
    name: &'static str,
    hold: &'static [&'static str],
    release: &'static [&'static str],
    leaving: &'static [&'static str],
    next: &'static [&'static str],
    /// The reply of a grant.
    granted: fn() -> Reply,
}

fn ok() -> Reply {
    Reply::Status("OK".into())
}

const ACQUIRES: &[Acquire] = &[
    Acquire {
        name: "GOBLIN.BLOCK",
        hold: &["GOBLIN.LOCK", KEY, "h", "60000"],
        release: &["GOBLIN.CAD", KEY, "h"],
        leaving: &["GOBLIN.BLOCK", KEY, "w1", "60000", "0"],
        next: &["GOBLIN.BLOCK", KEY, "w2", "60000", "0"],
        granted: ok,
    },
    Acquire {
        name: "GOBLIN.BZWINDOW",
        hold: &["GOBLIN.ZWINDOW", KEY, "*", "60", "1", "h"],
        release: &["GOBLIN.CAD", KEY, "h"],
        leaving: &["GOBLIN.BZWINDOW", KEY, "60", "1", "w1", "0"],
        next: &["GOBLIN.BZWINDOW", KEY, "60", "1", "w2", "0"],
        granted: || Reply::Int(1),
    },
    Acquire {
        name: "GOBLIN.BWLOCK",
        hold: &["GOBLIN.WLOCK", KEY, "h", "60000"],
        release: &["GOBLIN.RWUNLOCK", KEY, "h"],
        leaving: &["GOBLIN.BWLOCK", KEY, "w1", "60000", "0"],
        next: &["GOBLIN.BWLOCK", KEY, "w2", "60000", "0"],
        granted: ok,
    },
    // A reader's lease left behind would hold the writer behind it out.
    Acquire {
        name: "GOBLIN.BRLOCK",
        hold: &["GOBLIN.WLOCK", KEY, "h", "60000"],
        release: &["GOBLIN.RWUNLOCK", KEY, "h"],
        leaving: &["GOBLIN.BRLOCK", KEY, "w1", "60000", "0"],
        next: &["GOBLIN.BWLOCK", KEY, "w2", "60000", "0"],
        granted: ok,
    },
];

fn waiting(c: &mut Conn) -> i64 {
    info_field(c, "goblin", "goblin_waiting").parse().unwrap()
}

/// Who holds the key: the lock's token, or the window's or the readers' members.
fn holders(c: &mut Conn) -> Vec<String> {
    match c.call(&["TYPE", KEY]).status().as_str() {
        "string" => vec![c.call(&["GET", KEY]).text()],
        "zset" => c.call(&["ZRANGE", KEY, "0", "-1"]).texts(),
        _ => Vec::new(),
    }
}

/// The key held by `hold`, with `leaving` then `next` waiting for it; `leaving`'s connection and
/// client id.
fn line_up(server: &Server, c: &mut Conn, acquire: &Acquire) -> (Conn, i64, Conn) {
    c.call(&["FLUSHALL"]);
    assert!(!c.call(acquire.hold).is_error(), "{:?}", acquire.hold);
    let mut leaving = server.conn();
    let id = leaving.call(&["CLIENT", "ID"]).int();
    leaving.send(acquire.leaving).expect("send");
    assert!(wait_until(LONG, || waiting(c) == 1), "{}", acquire.name);
    let mut next = server.conn();
    next.send(acquire.next).expect("send");
    assert!(wait_until(LONG, || waiting(c) == 2), "{}", acquire.name);
    (leaving, id, next)
}

/// The grant `leaving` never got went back: the waiter behind it is served at once, and holds
/// the key alone.
fn taken_back_and_next_served(c: &mut Conn, next: &mut Conn, acquire: &Acquire, moment: &str) {
    let served = next.reply_within(LONG);
    assert_eq!(
        served,
        Some((acquire.granted)()),
        "{} {moment}",
        acquire.name
    );
    assert_eq!(
        holders(c),
        ["w2"],
        "{} {moment}: a grant left behind",
        acquire.name
    );
    assert_eq!(waiting(c), 0, "{} {moment}", acquire.name);
}

/// The server stopped, the release sent and the waiter's connection closed (`close_first`: in
/// that order), each waited for until it has reached the server's socket, then the server let
/// go: it reads both in one turn. Without the wait a loaded machine could deliver the close after
/// the server had read the release and written the waiter its grant: a grant then rightly its
/// holder's, as the server saw it.
fn while_stopped(
    server: &Server,
    release: &mut Conn,
    leaving: Conn,
    args: &[&str],
    close_first: bool,
) {
    struct Stopped<'s>(&'s Server);
    impl Drop for Stopped<'_> {
        fn drop(&mut self) {
            self.0.resume();
        }
    }
    let leaving_port = leaving.local_port();
    server.pause();
    let stopped = Stopped(server);
    let close = || {
        drop(leaving);
        server.until_closed(leaving_port);
    };
    let send = |release: &mut Conn| {
        release.send(args).expect("send");
        server.until_unread(release);
    };
    if close_first {
        close();
        send(release);
    } else {
        send(release);
        close();
    }
    drop(stopped);
    assert_eq!(release.read().expect("the release's reply"), Reply::Int(1));
}

on_every_server! {
    /// Killed in the transaction that frees the key: its grant was written, its reply never went
    /// out.
    fn a_waiter_killed_in_the_transaction_that_grants_it_leaves_nothing_held(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for acquire in ACQUIRES {
            let (_leaving, id, mut next) = line_up(&server, &mut c, acquire);
            let id = id.to_string();
            let exec = c.pipeline(&[
                vec!["MULTI"],
                acquire.release.to_vec(),
                vec!["CLIENT", "KILL", "ID", id.as_str()],
                vec!["EXEC"],
            ]);
            assert_eq!(exec[3], Reply::Array(vec![Reply::Int(1), Reply::Int(1)]), "{}", acquire.name);
            taken_back_and_next_served(&mut c, &mut next, acquire, "killed in MULTI");
        }
        assert!(!server.log().contains("internal error"), "{}", server.log());
    }
}

on_every_server! {
    /// Closed while the server was stopped, after the release reached it: the server grants the
    /// waiter, then finds its connection closed before the reply goes out.
    fn a_waiter_closed_as_the_release_arrives_leaves_nothing_held(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let mut release = server.conn();
        for acquire in ACQUIRES {
            let (leaving, _, mut next) = line_up(&server, &mut c, acquire);
            while_stopped(&server, &mut release, leaving, acquire.release, false);
            taken_back_and_next_served(&mut c, &mut next, acquire, "closed after the release");
        }
        assert!(!server.log().contains("internal error"), "{}", server.log());
    }
}

on_every_server! {
    /// Closed while the server was stopped, before the release reached it: the server reads the
    /// close first, and frees the connection only at the end of the turn, after the grant.
    fn a_waiter_closed_just_before_the_release_leaves_nothing_held(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let mut release = server.conn();
        for acquire in ACQUIRES {
            let (leaving, _, mut next) = line_up(&server, &mut c, acquire);
            while_stopped(&server, &mut release, leaving, acquire.release, true);
            taken_back_and_next_served(&mut c, &mut next, acquire, "closed before the release");
        }
        assert!(!server.log().contains("internal error"), "{}", server.log());
    }
}

on_every_server! {
    /// The control: a waiter that read its grant holds it, whether its connection then closes or
    /// is killed; the one behind it waits on.
    fn a_grant_read_by_its_waiter_stays_its_own_when_it_goes(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for acquire in ACQUIRES {
            for kill in [false, true] {
                let (mut leaving, id, mut next) = line_up(&server, &mut c, acquire);
                assert_eq!(c.call(acquire.release), Reply::Int(1));
                assert_eq!(leaving.reply_within(LONG), Some((acquire.granted)()), "{}", acquire.name);
                if kill {
                    let id = id.to_string();
                    assert_eq!(c.call(&["CLIENT", "KILL", "ID", &id]), Reply::Int(1));
                } else {
                    drop(leaving);
                }
                // The connection is gone once the server no longer lists it.
                let gone = || !c_list(&server).contains(&format!("id={id} "));
                assert!(wait_until(LONG, gone), "{}", acquire.name);
                // A turn of the server's loop after it went: a look at the line would have run.
                assert_eq!(c.call(&["PING"]), Reply::Status("PONG".into()));
                assert_eq!(holders(&mut c), ["w1"], "{}: the grant went back", acquire.name);
                assert_eq!(next.reply_within(Duration::from_millis(50)), None, "{}", acquire.name);
                assert_eq!(waiting(&mut c), 1);
                let unblocked = c.call(&["CLIENT", "UNBLOCK", &next_id(&server, acquire)]);
                assert_eq!(unblocked, Reply::Int(1));
                assert_eq!(next.reply_within(LONG), Some(Reply::Nil));
            }
        }
    }
}

/// `CLIENT LIST`, from a connection of its own.
fn c_list(server: &Server) -> String {
    server.conn().call(&["CLIENT", "LIST"]).text()
}

/// The id of the client blocked in `acquire.next`'s command.
fn next_id(server: &Server, acquire: &Acquire) -> String {
    let list = c_list(server);
    let command = acquire.next[0].to_ascii_lowercase();
    list.lines()
        .find(|line| line.contains(&format!("cmd={command}")) && line.contains("flags=b"))
        .and_then(|line| line.split(' ').find_map(|field| field.strip_prefix("id=")))
        .unwrap_or_else(|| panic!("no client blocked in {command}: {list}"))
        .to_string()
}
