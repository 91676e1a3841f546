//! Waiting at scale, on every server: ten thousand waiters on one lock served in arrival order,
//! one hand-off per release, and two thousand on a lease mutex; ten thousand locks with a
//! waiter each, every one handed over by its own expiry timer, then ten thousand waiters that
//! all time out; what a parked waiter holds of the server's memory against one of BLPOP; and
//! waiters that time out or die in numbers leave nothing behind: no line, no grant to a dead
//! client, the server's memory back where it was.
//!
//! A waiter here is one bare socket (a `Conn` holds two descriptors), so that ten thousand of
//! them fit the process's descriptor limit; the tests that open them take turns.

mod common;
use common::*;
use goblin_testkit::memory::{
    blocked_clients_trimmed, module_blocked_clients_bytes, settled_memory, used_memory,
};
use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Ten thousand clients at a time, at most: the tests that open them run one after another.
static CROWD: Mutex<()> = Mutex::new(());

const MANY: usize = 10_000;

/// Not a benchmark: a bound on the whole test that only a hand-off costing as much as the line
/// is long would reach (10,000 hand-offs took 0.2 to 0.5 s here, and 4,000 took 232 s on
/// Valkey 9.1 before each grant woke its one waiter rather than the whole line; 2,000 hand-offs
/// of a lease mutex 0.05 s, and 40 s while its waiters blocked on the key itself).
const LIVENESS: Duration = Duration::from_secs(120);

/// Room for `needed` open descriptors (`raise_open_files_limit`).
fn allow_descriptors(needed: u64) {
    let hard = raise_open_files_limit();
    assert!(
        hard >= needed,
        "the hard limit on open files is {hard}; these tests need {needed} (ulimit -Hn)"
    );
}

fn server(flavor: Flavor) -> Server {
    Server::builder(flavor)
        .without_replica()
        .args(["--maxclients", "10500"])
        .start()
}

/// A client that sent `args` and waits for the reply, on one socket.
struct Waiter(TcpStream);

impl Waiter {
    fn send(port: u16, args: &[&str]) -> Waiter {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let mut out = Vec::new();
        goblin_testkit::resp::encode(args, &mut out);
        stream.write_all(&out).expect("send");
        Waiter(stream)
    }

    fn reply(&self) -> Reply {
        self.0
            .set_read_timeout(Some(Duration::from_secs(60)))
            .expect("read timeout");
        goblin_testkit::resp::read_reply(&mut BufReader::new(&self.0)).expect("a reply")
    }
}

fn gauge(c: &mut Conn, name: &str) -> i64 {
    info_field(c, "goblin", name).parse().expect(name)
}

/// What each of `n` clients parked by `args` holds of the server's memory, read once the
/// server has trimmed their buffers (`blocked_clients_trimmed`), against the server's memory
/// settled before they came; then they leave, and the server is alone again.
fn parked_cost(server: &Server, c: &mut Conn, args: &[&str], n: usize) -> i64 {
    let before = settled_memory(c);
    let parked: Vec<Waiter> = (0..n).map(|_| Waiter::send(server.port, args)).collect();
    let blocked = |c: &mut Conn| info_field(c, "clients", "blocked_clients") == n.to_string();
    assert!(
        wait_until(Duration::from_secs(60), || blocked(c)),
        "{args:?}: not all blocked"
    );
    assert!(
        wait_until(Duration::from_secs(60), || blocked_clients_trimmed(c)),
        "{args:?}: the server never trimmed its blocked clients"
    );
    let cost = (used_memory(c) - before) / n as i64;
    drop(parked);
    assert!(wait_until(Duration::from_secs(60), || info_field(
        c,
        "clients",
        "blocked_clients"
    ) == "0"));
    cost
}

fn until_waiting(c: &mut Conn, n: i64) {
    assert!(
        wait_until(Duration::from_secs(60), || gauge(c, "goblin_waiting") == n),
        "{} waiting, not {n}",
        gauge(c, "goblin_waiting")
    );
}

on_every_server! {
    /// 10,000 waiters on one lock; the releases come in one pipeline, each for the token the
    /// lock must hold by then: every one succeeds only if each release handed the lock to the
    /// next waiter in arrival order, at once, before the next release ran.
    fn ten_thousand_waiters_on_one_lock_go_in_arrival_order(flavor: Flavor) {
        let _turn = CROWD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        allow_descriptors(MANY as u64 + 500);
        let server = server(flavor);
        let mut c = server.conn();
        let started = Instant::now();
        assert_eq!(c.call(&["GOBLIN.LOCK", "l", "t0", "600000"]), Reply::Status("OK".into()));
        let waiters: Vec<Waiter> = (1..=MANY)
            .map(|i| Waiter::send(server.port, &["GOBLIN.BLOCK", "l", &format!("t{i}"), "600000", "0"]))
            .collect();
        until_waiting(&mut c, MANY as i64);
        assert_eq!(gauge(&mut c, "goblin_waiting_keys"), 1);

        let releases: Vec<Vec<String>> = (0..MANY)
            .map(|i| vec!["GOBLIN.CAD".into(), "l".into(), format!("t{i}")])
            .collect();
        let replies = c.pipeline(&releases);
        let handed_over = replies.iter().filter(|reply| **reply == Reply::Int(1)).count();
        assert_eq!(handed_over, MANY, "only {handed_over} releases found the next waiter's token");
        assert_eq!(c.call(&["GET", "l"]), bulk(&format!("t{MANY}")));
        for (i, waiter) in waiters.iter().enumerate() {
            assert_eq!(waiter.reply(), Reply::Status("OK".into()), "waiter {}", i + 1);
        }
        until_waiting(&mut c, 0);
        assert_eq!(gauge(&mut c, "goblin_waiting_keys"), 0);
        assert!(started.elapsed() < LIVENESS, "{:?}", started.elapsed());
    }
}

on_every_server! {
    /// The same with a mutex of GOBLIN.BZWINDOW (limit 1), whose sorted set every release
    /// empties and every grant creates anew: 2,000 waiters, in order.
    fn a_lease_mutex_hands_over_in_arrival_order(flavor: Flavor) {
        const WAITERS: usize = 2_000;
        let _turn = CROWD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let server = server(flavor);
        let mut c = server.conn();
        let started = Instant::now();
        assert_eq!(c.call(&["GOBLIN.BZWINDOW", "m", "600", "1", "w0", "0"]), Reply::Int(1));
        let waiters: Vec<Waiter> = (1..=WAITERS)
            .map(|i| Waiter::send(server.port, &["GOBLIN.BZWINDOW", "m", "600", "1", &format!("w{i}"), "0"]))
            .collect();
        until_waiting(&mut c, WAITERS as i64);
        let releases: Vec<Vec<String>> = (0..WAITERS)
            .map(|i| vec!["GOBLIN.CAD".into(), "m".into(), format!("w{i}")])
            .collect();
        let handed_over = c.pipeline(&releases).iter().filter(|reply| **reply == Reply::Int(1)).count();
        assert_eq!(handed_over, WAITERS, "only {handed_over} releases found the next holder");
        for (i, waiter) in waiters.iter().enumerate() {
            assert_eq!(waiter.reply(), Reply::Int(1), "waiter {}", i + 1);
        }
        assert_eq!(c.call(&["ZRANGE", "m", "0", "-1"]).texts(), [format!("w{WAITERS}")]);
        until_waiting(&mut c, 0);
        assert!(started.elapsed() < LIVENESS, "{:?}", started.elapsed());
    }
}

on_every_server! {
    /// 10,000 locks, each held for 300 ms by one client and waited for by another: every lock
    /// goes to its waiter when it expires, on the line's own timer (nobody deletes a key).
    fn ten_thousand_locks_each_go_to_their_waiter_on_expiry(flavor: Flavor) {
        let _turn = CROWD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        allow_descriptors(MANY as u64 + 500);
        let server = server(flavor);
        let mut c = server.conn();
        let started = Instant::now();
        let holds: Vec<Vec<String>> = (0..MANY)
            .map(|i| vec!["GOBLIN.LOCK".into(), format!("l{i}"), "holder".into(), "300".into()])
            .collect();
        assert!(c.pipeline(&holds).iter().all(|reply| *reply == Reply::Status("OK".into())));
        let waiters: Vec<Waiter> = (0..MANY)
            .map(|i| Waiter::send(server.port, &["GOBLIN.BLOCK", &format!("l{i}"), "waiter", "600000", "60"]))
            .collect();
        for (i, waiter) in waiters.iter().enumerate() {
            assert_eq!(waiter.reply(), Reply::Status("OK".into()), "waiter of l{i}");
        }
        let held: Vec<Vec<String>> = (0..MANY).map(|i| vec!["GET".into(), format!("l{i}")]).collect();
        assert!(c.pipeline(&held).iter().all(|reply| *reply == bulk("waiter")));
        until_waiting(&mut c, 0);
        assert_eq!(gauge(&mut c, "goblin_waiting_keys"), 0);
        drop(waiters);

        // Now held for ten minutes: 10,000 more waiters, one per key, all time out.
        let waiters: Vec<Waiter> = (0..MANY)
            .map(|i| Waiter::send(server.port, &["GOBLIN.BLOCK", &format!("l{i}"), "late", "1000", "1"]))
            .collect();
        for (i, waiter) in waiters.iter().enumerate() {
            assert_eq!(waiter.reply(), Reply::Nil, "late waiter of l{i}");
        }
        until_waiting(&mut c, 0);
        assert_eq!(gauge(&mut c, "goblin_waiting_keys"), 0);
        assert!(c.pipeline(&held).iter().all(|reply| *reply == bulk("waiter")), "a late waiter took a lock");
        assert!(started.elapsed() < LIVENESS, "{:?}", started.elapsed());
    }
}

on_every_server! {
    /// A parked waiter, GOBLIN.BLOCK's or GOBLIN.BZWINDOW's, against one of BLPOP, each read
    /// once the server has trimmed the parked clients' buffers: no more than BLPOP's, the two
    /// clients the server makes for every client a module blocks, and 2 KB.
    ///
    /// Those two are the server's, not Goblin's: `RedisModule_BlockClient` (and `...OnKeys`)
    /// takes a client to gather the reply and one for a thread-safe context, each with its 16 KB
    /// reply buffer, and the server's cron, which trims the buffers of the clients it serves,
    /// never sees them. No module can block a client without them (a module of a few lines that
    /// only blocks costs the same); the 2 KB is the server's own book of a blocked client and
    /// Goblin's place in line.
    fn a_parked_waiter_costs_what_blpop_and_the_servers_two_clients_do(flavor: Flavor) {
        const PARKED: usize = 1_000;
        allow_descriptors(3 * PARKED as u64 + 500);
        let server = server(flavor);
        let mut c = server.conn();
        assert_eq!(c.call(&["GOBLIN.LOCK", "held", "holder", "600000"]), Reply::Status("OK".into()));
        assert_eq!(c.call(&["GOBLIN.BZWINDOW", "permits", "600", "1", "holder", "0"]), Reply::Int(1));
        // A first crowd grows the server's tables (clients, blocked keys) once.
        parked_cost(&server, &mut c, &["BLPOP", "list", "0"], PARKED);
        let blpop = parked_cost(&server, &mut c, &["BLPOP", "list", "0"], PARKED);
        let token = "a-token-of-36-bytes-like-a-uuid4-....";
        let block = parked_cost(&server, &mut c, &["GOBLIN.BLOCK", "held", token, "1000", "0"], PARKED);
        until_waiting(&mut c, 0);
        let bzwindow = parked_cost(&server, &mut c, &["GOBLIN.BZWINDOW", "permits", "600", "1", token, "0"], PARKED);
        until_waiting(&mut c, 0);
        let server_clients = module_blocked_clients_bytes(&server);
        for (command, cost) in [("GOBLIN.BLOCK", block), ("GOBLIN.BZWINDOW", bzwindow)] {
            let beyond = cost - blpop - server_clients;
            assert!(
                beyond <= 2048,
                "a waiter of {command} holds {cost} bytes: BLPOP's {blpop}, the server's two \
                 clients {server_clients}, and {beyond} more"
            );
        }
        assert_eq!(gauge(&mut c, "goblin_waiting_keys"), 0);
    }
}

on_every_server! {
    /// 1,000 waiters time out together and 1,000 are killed (their connections closed): the
    /// lines go, the killed are granted nothing (the release goes to the one live waiter left,
    /// behind them all), and the server's memory comes back to within a few kilobytes.
    fn waiters_that_time_out_or_die_leave_nothing_behind(flavor: Flavor) {
        // 2,001 sockets at most: this one runs beside the crowds of 10,000.
        const CROWD_SIZE: usize = 1_000;
        let server = server(flavor);
        let mut c = server.conn();
        let round = |c: &mut Conn| {
            assert_eq!(c.call(&["GOBLIN.LOCK", "held", "holder", "600000"]), Reply::Status("OK".into()));
            assert_eq!(c.call(&["GOBLIN.BZWINDOW", "permits", "600", "1", "holder", "0"]), Reply::Int(1));
            // Timeouts, on ten keys, locks and permits alike.
            let timing_out: Vec<Waiter> = (0..CROWD_SIZE)
                .map(|i| {
                    let key = format!("{}", i % 10);
                    if i % 2 == 0 {
                        Waiter::send(server.port, &["GOBLIN.BLOCK", "held", &key, "1000", "2"])
                    } else {
                        Waiter::send(server.port, &["GOBLIN.BZWINDOW", "permits", "600", "1", &key, "2"])
                    }
                })
                .collect();
            until_waiting(c, CROWD_SIZE as i64);
            for waiter in &timing_out {
                assert_eq!(waiter.reply(), Reply::Nil);
            }
            until_waiting(c, 0);
            drop(timing_out);
            // Deaths, then one live waiter behind them.
            let dying: Vec<Waiter> = (0..CROWD_SIZE)
                .map(|i| Waiter::send(server.port, &["GOBLIN.BLOCK", "held", &format!("dead{i}"), "1000", "0"]))
                .collect();
            until_waiting(c, CROWD_SIZE as i64);
            let live = Waiter::send(server.port, &["GOBLIN.BLOCK", "held", "alive", "1000", "0"]);
            until_waiting(c, CROWD_SIZE as i64 + 1);
            drop(dying);
            until_waiting(c, 1);
            assert_eq!(c.call(&["GOBLIN.CAD", "held", "holder"]), Reply::Int(1));
            assert_eq!(live.reply(), Reply::Status("OK".into()));
            assert_eq!(c.call(&["GET", "held"]), bulk("alive"), "a dead waiter was granted the lock");
            until_waiting(c, 0);
            assert_eq!(gauge(c, "goblin_waiting_keys"), 0);
            assert_eq!(c.call(&["DEL", "held", "permits"]), Reply::Int(2));
        };
        // The first round grows the server's tables once.
        round(&mut c);
        let baseline = settled_memory(&mut c);
        for _ in 0..2 {
            round(&mut c);
        }
        let grown = settled_memory(&mut c) - baseline;
        eprintln!("{flavor:?}: used_memory {grown:+} bytes after 4,000 more waiters came and went");
        assert!(grown < 32 * 1024, "used_memory grew by {grown} bytes");
    }
}
