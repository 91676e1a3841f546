//! CL.THROTTLE beside the real redis-cell, by hand, outside `make test`: redis-cell 0.5.0 is in
//! its GitHub repository only (crates.io has 0.2.2), which CI cannot fetch. `make test` proves
//! the same contract with tests of ours (tests/cl_throttle.rs). Build redis-cell's `v0.5.0` tag
//! in a folder of its own (`cargo build --release`, and `cargo build --release --features
//! valkey` for its Valkey build), then:
//!
//! ```text
//! GOBLIN_REDIS_CELL=/path/to/libredis_cell.so \
//! GOBLIN_REDIS_CELL_VALKEY=/path/to/valkey-build/libredis_cell.so \
//!     cargo test --release --test cl_throttle_redis_cell -- --ignored --nocapture --test-threads 1
//! ```
//!
//! (`GOBLIN_CELL_ONLY=valkey91`, say, runs the seeded calls on that server only.)
//!
//! The servers of a comparison run on one clock of the test's own (`FAKE_CLOCK_C`, preloaded;
//! built with `cc`, and given to redis-cell's copy with `patchelf`, which Debian packages): the
//! servers read the wall clock from a file the test sets before every call, so a call meets the
//! same instant on both, to the nanosecond, and replies, values and expiries are compared
//! exactly. redis-cell's Redis build loads into every server of the matrix; its Valkey build
//! into Valkey only.
//!
//! Each call either answers as redis-cell does, reply and key, or is one of the deliberate
//! differences of docs/commands/cl.throttle.md, counted by kind; anything else fails. What
//! would crash redis-cell's server is sent to Goblin alone (and, once per kind, to a
//! redis-cell server of its own, which it must crash).

mod common;
use common::*;

use std::collections::BTreeMap;
use std::path::PathBuf;

use goblin_core::native::cl_throttle::{parse_argument, Limits};

/// Goblin's own error texts, where redis-cell answers otherwise.
const REFUSALS: &[(&str, &str)] = &[
    (CL_THROTTLE_NEGATIVE_BURST, "negative max_burst"),
    (CL_THROTTLE_COUNT_BELOW_ONE, "negative count_per_period"),
    (CL_THROTTLE_PERIOD_BELOW_ONE, "negative period"),
    (CL_THROTTLE_NEGATIVE_QUANTITY, "negative quantity"),
    (CL_THROTTLE_RATE_OVERFLOW, "interval overflows"),
    (CL_THROTTLE_BURST_OVERFLOW, "tolerance overflows"),
    (CL_THROTTLE_QUANTITY_OVERFLOW, "increment overflows"),
    (CL_THROTTLE_TAT_OVERFLOW, "TAT overflows"),
];

fn cell_build(variable: &str) -> PathBuf {
    let path = std::env::var_os(variable)
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("set {variable} to a build of redis-cell 0.5.0"));
    assert!(path.exists(), "{}: no such file", path.display());
    path
}

/// The clock both servers of a comparison read: a preloaded library of the test's own that
/// answers `clock_gettime(CLOCK_REALTIME)`, `gettimeofday` and `time` from 8 bytes of a file
/// (Unix nanoseconds) and leaves every other clock alone, so the servers' timers run. Written
/// here, and built with the system's C compiler when the test starts.
const FAKE_CLOCK_C: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile const int64_t *now_ns;

__attribute__((constructor)) static void open_clock(void) {
    const char *path = getenv("GOBLIN_FAKE_CLOCK");
    int fd = path == NULL ? -1 : open(path, O_RDONLY);
    if (fd < 0) return;
    void *map = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map != MAP_FAILED) now_ns = map;
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    if (now_ns != NULL && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
        int64_t ns = *now_ns;
        ts->tv_sec = ns / 1000000000;
        ts->tv_nsec = ns % 1000000000;
        return 0;
    }
    return (int)syscall(SYS_clock_gettime, clock, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    (void)tz;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out != NULL) *out = ts.tv_sec;
    return ts.tv_sec;
}
"#;

/// The time both servers read, in whole milliseconds.
struct Clock {
    dir: TempDir,
    file: std::fs::File,
    ms: i64,
}

impl Clock {
    fn new() -> Clock {
        let dir = TempDir::new("fakeclock");
        std::fs::write(dir.0.join("fake_clock.c"), FAKE_CLOCK_C).expect("write the clock");
        let built = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(dir.0.join("fake_clock.so"))
            .arg(dir.0.join("fake_clock.c"))
            .status()
            .expect("run cc");
        assert!(built.success(), "cc could not build the clock");
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_secs() as i64
            * 1000;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(dir.0.join("now"))
            .expect("the clock's file");
        let mut clock = Clock {
            dir,
            file,
            ms: start,
        };
        clock.advance(0);
        clock
    }

    fn library(&self) -> PathBuf {
        self.dir.0.join("fake_clock.so")
    }

    /// In place: the servers map the file.
    fn advance(&mut self, ms: i64) {
        use std::os::unix::fs::FileExt;
        self.ms += ms;
        let ns = self.ms * 1_000_000;
        self.file
            .write_all_at(&ns.to_le_bytes(), 0)
            .expect("set the clock");
    }

    /// Waits until every server's `TIME` says the clock's millisecond. Valkey caches the time
    /// and reads the wall clock again only once its monotonic clock has moved, which a step of
    /// the test's clock does not move: a little real time passes here.
    fn seen_by(&self, servers: &mut [&mut Conn]) {
        let mut waited = 0;
        for c in servers.iter_mut() {
            while time_ms(&c.call(&["TIME"])) != self.ms {
                assert!(
                    waited < 5_000,
                    "a server does not see the clock at {} ms",
                    self.ms
                );
                std::thread::sleep(std::time::Duration::from_millis(1));
                waited += 1;
            }
        }
    }

    fn on(&self, builder: ServerBuilder) -> ServerBuilder {
        let file = self.dir.0.join("now");
        builder
            .env("LD_PRELOAD", self.library().to_str().expect("utf-8"))
            .env("GOBLIN_FAKE_CLOCK", file.to_str().expect("utf-8"))
    }

    /// A copy of redis-cell's build that needs the clock library itself: Valkey loads modules
    /// with `RTLD_DEEPBIND`, so their calls into libc pass a preloaded library by.
    /// Made once: a server has it mapped, and a copy over it would change its code under it.
    fn clocked(&self, build: &PathBuf) -> PathBuf {
        let copy = self.dir.0.join("libredis_cell.so");
        if copy.exists() {
            return copy;
        }
        std::fs::copy(build, &copy).expect("copy redis-cell");
        let patched = std::process::Command::new("patchelf")
            .arg("--add-needed")
            .arg(self.library())
            .arg(&copy)
            .status()
            .expect("run patchelf (apt-get install patchelf)");
        assert!(patched.success(), "patchelf failed");
        copy
    }
}

/// A server with redis-cell loaded (`build`), on `clock`; no replica (its clock is the test's).
fn with_redis_cell(flavor: Flavor, build: &PathBuf, clock: &Clock) -> Server {
    let build = clock.clocked(build);
    without_active_expiry(
        clock
            .on(Server::builder(flavor))
            .without_module()
            .without_replica()
            .args(["--enable-module-command", "yes"])
            .args(["--loadmodule", build.to_str().expect("utf-8")]),
    )
}

/// A server with Goblin, its CL.THROTTLE the stand-in, on `clock`.
fn with_goblin(flavor: Flavor, clock: &Clock) -> Server {
    without_active_expiry(
        clock
            .on(Server::builder(flavor))
            .without_replica()
            .module_args(["allow-unload"]),
    )
}

/// Starts a server whose keys expire only when read, as the server expires them then: once
/// the clock is past their expiry, never in it. Its active expiry would delete a key in its
/// expiry's own millisecond (a TAT under a millisecond ahead expires in its call's one) at a
/// moment the test's clock does not set, on one server and not yet on the other: without it,
/// a key that ends in its call's millisecond reads the same on both, and the next call of that
/// millisecond finds it on both, so it is compared too.
fn without_active_expiry(builder: ServerBuilder) -> Server {
    let server = builder.args(["--enable-debug-command", "yes"]).start();
    let set = server.conn().call(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    assert_eq!(set, Reply::Status("OK".into()));
    server
}

type State = (String, Reply, i64);

fn state(c: &mut Conn, key: &[u8]) -> State {
    snapshot(c, key)
}

/// Makes `key` on `c` hold `state` (a string, or nothing), which must not be due at the
/// server's clock (`ending`): a client's `SET ... PXAT` at or before it deletes the key.
fn restore(c: &mut Conn, key: &[u8], state: &State) {
    c.call(&[&b"DEL"[..], key]);
    if let (kind, Reply::Bulk(value), at) = state {
        assert_eq!(kind, "string");
        let mut set: Vec<Vec<u8>> = vec![b"SET".to_vec(), key.to_vec(), value.clone()];
        if *at > 0 {
            set.extend([b"PXAT".to_vec(), at.to_string().into_bytes()]);
        }
        assert_eq!(c.call(&set), Reply::Status("OK".into()));
    }
}

/// What the runs counted.
#[derive(Default)]
struct Tally {
    calls: usize,
    same: usize,
    allowed: usize,
    limited: usize,
    both_errors: usize,
    /// Calls that found a TAT ending in their millisecond (its key expires in it), and calls
    /// that left one: compared as every other, reply and key.
    found_ending: usize,
    left_ending: usize,
    /// The deliberate differences, by kind.
    deliberate: BTreeMap<String, usize>,
    /// Inputs that crash redis-cell's server, sent to Goblin only, by kind.
    goblin_only: BTreeMap<String, usize>,
    /// (redis-cell's error, Goblin's error) and how often.
    error_pairs: BTreeMap<(String, String), usize>,
    unexplained: Vec<String>,
}

impl Tally {
    fn count(map: &mut BTreeMap<String, usize>, kind: &str) {
        *map.entry(kind.to_string()).or_default() += 1;
    }

    fn add(&mut self, other: Tally) {
        self.calls += other.calls;
        self.same += other.same;
        self.allowed += other.allowed;
        self.limited += other.limited;
        self.both_errors += other.both_errors;
        self.found_ending += other.found_ending;
        self.left_ending += other.left_ending;
        for (kind, n) in other.deliberate {
            *self.deliberate.entry(kind).or_default() += n;
        }
        for (kind, n) in other.goblin_only {
            *self.goblin_only.entry(kind).or_default() += n;
        }
        for (pair, n) in other.error_pairs {
            *self.error_pairs.entry(pair).or_default() += n;
        }
        self.unexplained.extend(other.unexplained);
    }

    fn print(&self, label: &str) {
        eprintln!(
            "{label}: {} calls: {} the same (allowed {}, limited {}, both errors {}; {} found a \
             TAT ending in their millisecond, {} left one), deliberate {:?}, to Goblin alone \
             {:?}, unexplained {}",
            self.calls,
            self.same,
            self.allowed,
            self.limited,
            self.both_errors,
            self.found_ending,
            self.left_ending,
            self.deliberate,
            self.goblin_only,
            self.unexplained.len()
        );
    }
}

/// Limits as people set them, and their edges: intervals from a nanosecond to a day.
const BURSTS: &[&str] = &["0", "1", "2", "4", "9", "15", "99"];
const COUNTS: &[&str] = &[
    "1", "2", "3", "7", "10", "30", "60", "100", "999", "1000", "2000", "3000", "999999",
    "1000000", "2000000", "3000000",
];
const PERIODS: &[&str] = &["1", "2", "3", "7", "10", "60", "3600", "86400"];
const QUANTITIES: &[&str] = &["0", "1", "1", "1", "1", "2", "3", "5", "10", "100"];
/// Integers at the edges of redis-cell's arithmetic.
const EDGES: &[&str] = &[
    "0",
    "-0",
    "-1",
    "-5",
    "1000000000",
    "1000000001",
    "2000000000",
    "9223372035",
    "9223372036",
    "9223372037",
    "4611686018427387903",
    "9223372036854775807",
    "-9223372036854775808",
];
/// What is not an integer to redis-cell.
const NOT_INTEGERS: &[&str] = &[
    "1.5",
    "abc",
    "",
    " 1",
    "1 ",
    "0x10",
    "1e3",
    "+",
    "-",
    "9223372036854775808",
    "-9223372036854775809",
    "١",
];

/// One argument: usually `typical`, sometimes spelled another way, an edge, or not an integer.
fn number(rng: &mut Rng, typical: &str) -> String {
    match rng.below(100) {
        0..=79 => typical.to_string(),
        80..=84 => format!("+{typical}"),
        85..=88 => format!("00{typical}"),
        89..=94 => rng.pick(EDGES).to_string(),
        _ => rng.pick(NOT_INTEGERS).to_string(),
    }
}

/// A TAT near `now_ms` (nanoseconds), as redis-cell writes one, or spelled as it still reads one.
fn tat_text(rng: &mut Rng, now_ms: i64) -> String {
    let offset_ns = (rng.below(240_000_000_000) as i64) - 60_000_000_000;
    let tat = (now_ms * 1_000_000 + offset_ns) as u64;
    match rng.below(10) {
        0 => format!("+{tat}"),
        1 => format!("000{tat}"),
        2 => "0".into(),
        3 => u64::MAX.to_string(),
        _ => tat.to_string(),
    }
}

/// A key's state before a call, written on both servers: what redis-cell can read.
fn preset(rng: &mut Rng, key: &[u8], now_ms: i64) -> Vec<Vec<Vec<u8>>> {
    let del = vec![b"DEL".to_vec(), key.to_vec()];
    let set = |value: Vec<u8>, at: Option<i64>| {
        let mut set = vec![b"SET".to_vec(), key.to_vec(), value];
        if let Some(at) = at {
            set.extend([b"PXAT".to_vec(), at.to_string().into_bytes()]);
        }
        set
    };
    match rng.below(6) {
        0 => vec![del],
        // Not UTF-8: redis-cell answers an error (it does not crash on a value).
        1 => vec![del, set(b"\xff\xfe".to_vec(), None)],
        // Without an expiry: a TAT that may fall behind the clock.
        2 => vec![del, set(tat_text(rng, now_ms).into_bytes(), None)],
        _ => {
            let text = tat_text(rng, now_ms);
            let at = now_ms + 1 + rng.below(300_000) as i64;
            vec![del, set(text.into_bytes(), Some(at))]
        }
    }
}

/// A command's words.
type Words = Vec<Vec<u8>>;

/// What would crash redis-cell's server, for Goblin alone: the key's setup, and the call.
fn crashing(rng: &mut Rng, key: &[u8]) -> (&'static str, Vec<Words>, Words) {
    let call = |key: &[u8]| {
        vec![
            b"CL.THROTTLE".to_vec(),
            key.to_vec(),
            b"5".to_vec(),
            b"1".to_vec(),
            b"60".to_vec(),
        ]
    };
    let set = |value: &[u8]| vec![b"SET".to_vec(), key.to_vec(), value.to_vec()];
    match rng.below(5) {
        0 => {
            let mut call = call(key);
            let at = 1 + rng.below(4) as usize;
            call[at].push(0xff);
            ("an argument not UTF-8", vec![], call)
        }
        1 => (
            "a key of another type",
            vec![vec![b"RPUSH".to_vec(), key.to_vec(), b"x".to_vec()]],
            call(key),
        ),
        2 => {
            let value = *rng.pick(&[
                &b"abc"[..],
                b"-1",
                b"1.5",
                b" 5",
                b"-0",
                b"18446744073709551616",
            ]);
            ("a string that is not a u64", vec![set(value)], call(key))
        }
        3 => ("an empty string", vec![set(b"")], call(key)),
        _ => (
            "a key of another type",
            vec![vec![
                b"ZADD".to_vec(),
                key.to_vec(),
                b"1".to_vec(),
                b"m".to_vec(),
            ]],
            call(key),
        ),
    }
}

/// The limits Goblin derives from a call's arguments, where they are valid.
fn limits_of(argv: &[Vec<u8>]) -> Option<Limits> {
    let number = |i: usize| argv.get(i).and_then(|a| parse_argument(a));
    let quantity = if argv.len() == 6 { number(5)? } else { 1 };
    Limits::new(number(2)?, number(3)?, number(4)?, quantity).ok()
}

/// A key that expires in this millisecond (`now_ms`): the server keeps it through the
/// millisecond, but no client can write one (`SET ... PXAT` at or before the clock deletes).
fn ending(state: &State, now_ms: i64) -> bool {
    (0..=now_ms).contains(&state.2)
}

/// Makes `key` hold `state` on both servers, where one of them left it so: restored where it
/// can be, and deleted on both where it ends in this millisecond.
fn resync(to: &mut Conn, other: &mut Conn, key: &[u8], state: &State, now_ms: i64) {
    if ending(state, now_ms) {
        to.call(&[&b"DEL"[..], key]);
        other.call(&[&b"DEL"[..], key]);
    } else {
        restore(to, key, state);
    }
}

/// Runs `calls` generated calls from `seed` on `cell` and `goblin`, which share `clock`.
fn differential(
    cell: &mut Conn,
    goblin: &mut Conn,
    clock: &mut Clock,
    seed: u64,
    calls: usize,
) -> Tally {
    let mut rng = Rng::new(seed);
    let mut tally = Tally::default();
    let keys: Vec<Vec<u8>> = (0..60)
        .map(|k| format!("cell:{seed}:{k}").into_bytes())
        .collect();
    // Most calls on a key use its own limits, so that buckets fill and run dry.
    let policies: Vec<[&str; 3]> = keys
        .iter()
        .map(|_| [*rng.pick(BURSTS), *rng.pick(COUNTS), *rng.pick(PERIODS)])
        .collect();
    let mut k = 0;
    for _ in 0..calls {
        let advance = match rng.below(20) {
            0..=7 => 0,
            8..=9 => 1,
            10..=12 => rng.below(10) as i64,
            13..=15 => rng.below(1000) as i64,
            16..=18 => rng.below(5000) as i64,
            _ => 60_000 + rng.below(600_000) as i64,
        };
        clock.advance(advance);
        clock.seen_by(&mut [&mut *cell, &mut *goblin]);
        let now = clock.ms;
        // A quarter of the calls on the key of the call before, so that a call often finds
        // the TAT that one left, in its millisecond too.
        if rng.below(4) != 0 {
            k = rng.below(keys.len() as u64) as usize;
        }
        let key = &keys[k];
        if rng.below(100) < 4 {
            for command in preset(&mut rng, key, now) {
                let (a, b) = (cell.call(&command), goblin.call(&command));
                assert!(!a.is_error() && a == b, "{command:?}: {a:?} / {b:?}");
            }
        }
        if rng.below(100) < 2 {
            let (kind, setup, call) = crashing(&mut rng, key);
            let before = state(goblin, key);
            goblin.call(&[&b"DEL"[..], key]);
            for command in &setup {
                assert!(!goblin.call(command).is_error(), "{kind}: {command:?}");
            }
            let set_up = state(goblin, key);
            let reply = goblin.call(&call);
            assert!(reply.is_error(), "{kind}: {call:?}: {reply:?}");
            assert_eq!(state(goblin, key), set_up, "{kind}: {call:?} wrote");
            Tally::count(&mut tally.goblin_only, kind);
            resync(goblin, cell, key, &before, now);
            continue;
        }
        let policy = policies[k];
        let own = rng.below(10) < 7;
        let mut argv: Vec<Vec<u8>> = vec![b"CL.THROTTLE".to_vec(), key.clone()];
        for (i, typical) in policy.iter().enumerate() {
            let typical = if own {
                *typical
            } else {
                *rng.pick([BURSTS, COUNTS, PERIODS][i])
            };
            argv.push(number(&mut rng, typical).into_bytes());
        }
        if rng.below(10) < 6 {
            let typical = *rng.pick(QUANTITIES);
            argv.push(number(&mut rng, typical).into_bytes());
        }
        match rng.below(100) {
            0 => {
                argv.pop();
            }
            1 => argv.push(b"1".to_vec()),
            _ => {}
        }
        tally.calls += 1;
        let before = state(cell, key);
        let text = |argv: &[Vec<u8>]| {
            argv.iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            before,
            state(goblin, key),
            "{}: the servers drifted apart at {now} ms",
            text(&argv)
        );
        let (theirs, ours) = (cell.call(&argv), goblin.call(&argv));
        let (after_theirs, after_ours) = (state(cell, key), state(goblin, key));
        tally.found_ending += usize::from(ending(&before, now));
        tally.left_ending += usize::from(ending(&after_ours, now));
        let shown = || {
            format!(
                "{} at {now} ms: redis-cell {theirs:?} {after_theirs:?}, Goblin {ours:?} {after_ours:?}, before {before:?}",
                text(&argv)
            )
        };
        let kind: Option<&str> = match (&theirs, &ours) {
            (Reply::Array(a), Reply::Array(b)) if a == b && after_theirs == after_ours => {
                tally.same += 1;
                if a[0] == Reply::Int(0) {
                    tally.allowed += 1;
                } else {
                    tally.limited += 1;
                }
                continue;
            }
            (Reply::Error(a), Reply::Error(b)) if after_theirs == after_ours => {
                tally.same += 1;
                tally.both_errors += 1;
                *tally.error_pairs.entry((a.clone(), b.clone())).or_default() += 1;
                continue;
            }
            // redis-cell writes the key, then fails to give it its (negative) expiry.
            (Reply::Error(_), Reply::Error(b)) if after_ours == before => {
                *tally
                    .error_pairs
                    .entry(("(after writing the key)".into(), b.clone()))
                    .or_default() += 1;
                Some("redis-cell errs after writing the key")
            }
            (Reply::Array(_), Reply::Error(b)) if after_ours == before => REFUSALS
                .iter()
                .find(|(text, _)| text == b)
                .map(|(_, kind)| *kind),
            (Reply::Array(a), Reply::Array(b)) if after_theirs == after_ours => {
                let ints = |r: &[Reply]| r.iter().map(Reply::int).collect::<Vec<i64>>();
                let (a, b) = (ints(a), ints(b));
                let others_equal =
                    |skip: &[usize]| (0..5).all(|i| skip.contains(&i) || a[i] == b[i]);
                let emission = limits_of(&argv).map(|l| l.emission);
                let behind = match &before {
                    (_, Reply::Bulk(v), _) => std::str::from_utf8(v)
                        .ok()
                        .and_then(|v| v.parse::<u64>().ok())
                        .is_some_and(|tat| i128::from(tat) < i128::from(now) * 1_000_000),
                    _ => false,
                };
                // Refused on a TAT behind the clock: Goblin counts from now (reset_after 0),
                // redis-cell from the TAT.
                if behind && a[0] == 1 && b[4] == 0 && others_equal(&[2, 4]) {
                    Some("a TAT behind the clock, refused: a full bucket")
                } else if emission.is_some_and(|e| e < 1000) && others_equal(&[2]) {
                    Some("under a microsecond a token: remaining counted in nanoseconds")
                } else if a[2] > a[1] && b[2] == b[1] && others_equal(&[2]) {
                    Some("remaining past the limit: the limit")
                } else {
                    None
                }
            }
            _ => None,
        };
        match kind {
            Some(kind) => Tally::count(&mut tally.deliberate, kind),
            None => tally.unexplained.push(shown()),
        }
        // Back in step: redis-cell's key as Goblin left it.
        let ours_now = state(goblin, key);
        resync(cell, goblin, key, &ours_now, now);
    }
    tally
}

/// Seeds and calls per server: 3 x 2,000.
const SEEDS: [u64; 3] = [0x5eed_0001, 0x5eed_0002, 0x5eed_0003];
const CALLS: usize = 2_000;

fn differential_on(flavor: Flavor, build: &PathBuf, label: &str) -> Tally {
    let mut clock = Clock::new();
    let cell_server = with_redis_cell(flavor, build, &clock);
    let goblin_server = with_goblin(flavor, &clock);
    let (mut cell, mut goblin) = (cell_server.conn(), goblin_server.conn());
    assert_eq!(
        info_field(&mut goblin, "goblin", "goblin_stand_in_cl_throttle_calls"),
        "0",
        "{label}: Goblin's CL.THROTTLE is the stand-in"
    );
    let mut total = Tally::default();
    for seed in SEEDS {
        total.add(differential(
            &mut cell,
            &mut goblin,
            &mut clock,
            seed,
            CALLS,
        ));
    }
    total.print(label);
    for line in total.unexplained.iter().take(20) {
        eprintln!("  unexplained: {line}");
    }
    total
}

#[test]
#[ignore = "needs a build of redis-cell 0.5.0 in GOBLIN_REDIS_CELL (and cc and patchelf)"]
fn seeded_calls_answer_as_redis_cell_does() {
    let build = cell_build("GOBLIN_REDIS_CELL");
    let mut runs: Vec<(String, Tally)> = Flavor::ALL
        .iter()
        .filter(|f| std::env::var("GOBLIN_CELL_ONLY").map_or(true, |only| f.name() == only))
        .map(|&flavor| {
            let label = format!("{} with redis-cell's Redis build", flavor.label());
            let tally = differential_on(flavor, &build, &label);
            (label, tally)
        })
        .collect();
    if std::env::var_os("GOBLIN_REDIS_CELL_VALKEY").is_some() {
        let build = cell_build("GOBLIN_REDIS_CELL_VALKEY");
        let label = "Valkey 9.1 with redis-cell's Valkey build".to_string();
        let tally = differential_on(Flavor::Valkey91, &build, &label);
        runs.push((label, tally));
    }
    let mut all = Tally::default();
    for (_, tally) in runs.iter_mut() {
        all.add(std::mem::take(tally));
    }
    all.print("all servers");
    eprintln!("error texts (redis-cell's, Goblin's):");
    for ((theirs, ours), n) in &all.error_pairs {
        eprintln!("  {n:6}  {theirs:?} -> {ours:?}");
    }
    assert!(
        all.unexplained.is_empty(),
        "{} unexplained differences",
        all.unexplained.len()
    );
}

/// A call of the switching test: a key's own limits, hit in bursts as time moves on.
fn switching_call(rng: &mut Rng, keys: &[(String, [&'static str; 3])]) -> Vec<String> {
    let (key, [burst, count, period]) = &keys[rng.below(keys.len() as u64) as usize];
    let mut call = vec![
        "CL.THROTTLE".to_string(),
        key.clone(),
        burst.to_string(),
        count.to_string(),
        period.to_string(),
    ];
    if rng.below(3) == 0 {
        call.push(rng.pick(QUANTITIES).to_string());
    }
    call
}

/// One server moves from redis-cell to Goblin and back (MODULE UNLOAD and LOAD, keys kept),
/// beside a reference that stays on redis-cell, both on one clock: in each phase, every call
/// answers as on the reference and leaves the key as there. Returns the calls per phase.
fn switching_on(flavor: Flavor, build: &PathBuf) -> [usize; 3] {
    let mut clock = Clock::new();
    let reference_server = with_redis_cell(flavor, build, &clock);
    let switching_server = with_redis_cell(flavor, build, &clock);
    let (mut reference, mut switching) = (reference_server.conn(), switching_server.conn());
    let clocked = clock.clocked(build);
    let so = clocked.to_str().expect("utf-8");
    let mut rng = Rng::new(0x5a17c4);
    let keys: Vec<(String, [&str; 3])> = (0..40)
        .map(|k| {
            (
                format!("switch:{k}"),
                [
                    *rng.pick(BURSTS),
                    *rng.pick(&COUNTS[..10]),
                    *rng.pick(PERIODS),
                ],
            )
        })
        .collect();
    let mut counts = [0; 3];
    for (phase, count) in counts.iter_mut().enumerate() {
        match phase {
            1 => {
                assert_eq!(
                    switching.call(&["MODULE", "UNLOAD", "redis-cell"]),
                    Reply::Status("OK".into())
                );
                let goblin = module_path();
                let loaded = switching.call(&[
                    "MODULE",
                    "LOAD",
                    goblin.to_str().expect("utf-8"),
                    "allow-unload",
                ]);
                assert_eq!(
                    loaded,
                    Reply::Status("OK".into()),
                    "{flavor:?}: load Goblin"
                );
                assert_eq!(
                    info_field(
                        &mut switching,
                        "goblin",
                        "goblin_stand_in_cl_throttle_calls"
                    ),
                    "0"
                );
            }
            2 => {
                assert_eq!(
                    switching.call(&["MODULE", "UNLOAD", "goblin"]),
                    Reply::Status("OK".into())
                );
                assert_eq!(
                    switching.call(&["MODULE", "LOAD", so]),
                    Reply::Status("OK".into()),
                    "{flavor:?}: back to redis-cell"
                );
            }
            _ => {}
        }
        for _ in 0..600 {
            clock.advance([0, 1, 7, 300, 2_000][rng.below(5) as usize]);
            clock.seen_by(&mut [&mut reference, &mut switching]);
            let now = clock.ms;
            let call = switching_call(&mut rng, &keys);
            let key = call[1].as_bytes();
            let (theirs, ours) = (reference.call(&call), switching.call(&call));
            let (a, b) = (state(&mut reference, key), state(&mut switching, key));
            assert_eq!(
                (&ours, &b),
                (&theirs, &a),
                "{flavor:?} phase {phase}: {call:?} at {now} ms"
            );
            *count += 1;
        }
        // Every key, not only the last one called: the same on both.
        for (key, _) in &keys {
            assert_eq!(
                state(&mut switching, key.as_bytes()),
                state(&mut reference, key.as_bytes()),
                "{key}"
            );
        }
    }
    counts
}

#[test]
#[ignore = "needs a build of redis-cell 0.5.0 in GOBLIN_REDIS_CELL (and cc and patchelf)"]
fn a_server_switched_from_redis_cell_to_goblin_and_back_keeps_every_limit() {
    let build = cell_build("GOBLIN_REDIS_CELL");
    for &flavor in Flavor::ALL {
        let counts = switching_on(flavor, &build);
        eprintln!(
            "{}: {} calls on redis-cell, {} after the switch to Goblin, {} back on redis-cell: all as the reference",
            flavor.label(),
            counts[0],
            counts[1],
            counts[2]
        );
    }
}

#[test]
#[ignore = "needs a build of redis-cell 0.5.0 in GOBLIN_REDIS_CELL"]
fn goblin_steps_aside_where_redis_cell_is_loaded() {
    let build = cell_build("GOBLIN_REDIS_CELL");
    for &flavor in Flavor::ALL {
        // redis-cell first: its command stays, and Goblin registers no stand-in for it.
        let server = Server::builder(flavor)
            .without_module()
            .without_replica()
            .args(["--loadmodule", build.to_str().expect("utf-8")])
            .args(["--loadmodule", module_path().to_str().expect("utf-8")])
            .start();
        let mut c = server.conn();
        assert!(
            server
                .log()
                .contains("cl.throttle is the server's own here; no stand-in"),
            "{flavor:?}"
        );
        let info = c.call(&["INFO", "goblin"]).text();
        assert!(!info.contains("cl_throttle"), "{flavor:?}: {info}");
        let usage = c.call(&["CL.THROTTLE", "k", "1"]);
        assert!(
            matches!(&usage, Reply::Error(e) if e.starts_with("Cell error")),
            "{flavor:?}: {usage:?}"
        );
        drop(c);
        drop(server);
        // Goblin first: its stand-in has the name, and redis-cell cannot load.
        let server = Server::builder(flavor)
            .without_replica()
            .args(["--enable-module-command", "yes"])
            .start();
        let mut c = server.conn();
        let refused = c.call(&["MODULE", "LOAD", build.to_str().expect("utf-8")]);
        assert!(refused.is_error(), "{flavor:?}: {refused:?}");
        assert_eq!(
            info_field(&mut c, "goblin", "goblin_stand_in_cl_throttle_calls"),
            "0"
        );
        eprintln!(
            "{}: Goblin steps aside after redis-cell; redis-cell cannot load after Goblin",
            flavor.label()
        );
    }
}

/// What aborts redis-cell's server, once per kind, each on a server of its own: it must die.
/// (Goblin's error for each, with nothing written, is checked in the seeded run.)
#[test]
#[ignore = "needs a build of redis-cell 0.5.0 in GOBLIN_REDIS_CELL"]
fn what_crashes_redis_cell() {
    let build = cell_build("GOBLIN_REDIS_CELL");
    type Kind<'a> = (&'a str, &'a [&'a [&'a [u8]]], &'a [&'a [u8]]);
    let kinds: &[Kind] = &[
        (
            "an argument not UTF-8",
            &[],
            &[b"CL.THROTTLE", b"k\xff", b"5", b"1", b"60"],
        ),
        (
            "a key of another type",
            &[&[b"RPUSH", b"k", b"x"]],
            &[b"CL.THROTTLE", b"k", b"5", b"1", b"60"],
        ),
        (
            "a string that is not a u64",
            &[&[b"SET", b"k", b"-1"]],
            &[b"CL.THROTTLE", b"k", b"5", b"1", b"60"],
        ),
        (
            "an empty string",
            &[&[b"SET", b"k", b""]],
            &[b"CL.THROTTLE", b"k", b"5", b"1", b"60"],
        ),
    ];
    for &(kind, setup, call) in kinds {
        let mut server = Server::builder(Flavor::Redis82)
            .without_module()
            .without_replica()
            .args(["--loadmodule", build.to_str().expect("utf-8")])
            .start();
        let mut c = server.conn();
        for command in setup {
            assert!(!c.call(command).is_error());
        }
        c.send(call).expect("send");
        assert!(c.read().is_err(), "{kind}: redis-cell answered");
        assert!(
            wait_until(std::time::Duration::from_secs(10), || Conn::connect(
                server.port
            )
            .is_err()),
            "{kind}: the server is still up"
        );
        eprintln!("redis-cell on Redis 8.2: {kind} aborts the server");
        server.kill();
    }
}
