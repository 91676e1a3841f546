//! `scripts/instructions.sh`: what each Goblin command that writes costs per call against its
//! floor (`bench/floor`, the same server-facing work on the cheapest module API calls) and its
//! native command where a server has one, counted in instructions under callgrind; and the
//! pipelined throughput of each beside its native or Lua anchor, side by side in one run.
//! Written to `bench/results/instructions.md`.
//!
//!     instructions --floor PATH [--module PATH] [--out FILE] [--servers a,b] [--rows a,b]
//!                  [--no-check] [--no-count] [--no-throughput] [--profile DIR]
//!
//! Three steps, each can be left out:
//!
//! 1. **check**: on every server, each row's Goblin call and its floor call run side by side
//!    (in one MULTI, so that they share the server's clock), on keys of their own: the replies,
//!    the replicated effects (the AOF, command for command), the keyspace events and the data
//!    they leave (type, value, expiry) must be the same; the replica (replica mode) must end
//!    identical. A floor that did less than Goblin would be a floor of nothing.
//! 2. **count**: each row's workload (20,000 calls over 1,000 keys unless it says otherwise,
//!    every call allowed, which each reply is checked for) on one server under callgrind with
//!    Goblin and the floor both loaded, for the floor, then Goblin, then the server's natives,
//!    each from an empty keyspace on the same keys: the server's whole `call()`, inclusive, per
//!    call. A row with waiters parked (the line's grant) adds `moduleHandleBlockedClients`,
//!    where the server answers the waiters woken, outside `call()`.
//!    The counters are zeroed after the row's setup and dumped before the shutdown, so the
//!    figure is the workload's calls alone (callgrind says how many `call()` ran). With
//!    `--profile DIR` each run's dump is kept there (`<server>-<row>-<side>.out`), for
//!    `callgrind_annotate --inclusive=yes`: where a row's instructions go, function by function.
//! 3. **throughput**: each row's command against its anchor, pipelined 16 deep, on 50
//!    connections, interleaved, median of 3 rounds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use goblin_testkit::resp::encode;
use goblin_testkit::{free_port, snapshot, Conn, Flavor, Reply, Rng, Server, TempDir, AOF_ALWAYS};

#[path = "../load.rs"]
#[allow(dead_code)]
mod load;

/// The servers, as the table names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Host {
    Redis70,
    Redis82,
    Valkey91,
    /// Redis 8.10 built with GCRA: the natives GCRA, INCREX and DELEX.
    Redis810,
}

impl Host {
    const ALL: [Host; 4] = [Host::Redis70, Host::Redis82, Host::Valkey91, Host::Redis810];

    fn flavor(self) -> Flavor {
        match self {
            Host::Redis70 => Flavor::Redis70,
            Host::Redis82 => Flavor::Redis82,
            Host::Valkey91 => Flavor::Valkey91,
            Host::Redis810 => Flavor::Redis810,
        }
    }

    fn binary(self) -> PathBuf {
        match self {
            Host::Redis810 => goblin_testkit::redis810_with_gcra(),
            other => other.flavor().binary(),
        }
    }

    fn label(self) -> &'static str {
        match self {
            Host::Redis810 => "Redis 8.10 (with GCRA)",
            other => other.flavor().label(),
        }
    }

    fn name(self) -> &'static str {
        self.flavor().name()
    }

    /// Redis 7.0 has no command-time snapshot of the clock: two calls in one MULTI may read
    /// milliseconds apart.
    fn has_clock_snapshot(self) -> bool {
        self != Host::Redis70
    }
}

const REDIS_ONLY: &[Host] = &[Host::Redis70, Host::Redis82, Host::Valkey91];
const EVERY_HOST: &[Host] = &[Host::Redis70, Host::Redis82, Host::Valkey91, Host::Redis810];

/// A native command a row is compared with, and the server it runs on.
#[derive(Clone, Copy)]
struct Native {
    label: &'static str,
    template: &'static str,
    host: Host,
    /// The native allowed the call.
    allowed: fn(&Reply) -> bool,
}

const GCRA: Native = Native {
    label: "GCRA",
    template: "GCRA KEY 1000000 1 60",
    host: Host::Redis810,
    allowed: |r| first_is(r, 0),
};
const INCREX: Native = Native {
    label: "INCREX",
    template: "INCREX KEY BYINT 1 EX 60 ENX",
    host: Host::Redis810,
    allowed: |r| matches!(r, Reply::Array(items) if items.get(1) == Some(&Reply::Int(1))),
};
const DELEX: Native = Native {
    label: "DELEX",
    template: "DELEX KEY IFEQ tok",
    host: Host::Redis810,
    allowed: |r| is_int(r, 1),
};
const DELIFEQ: Native = Native {
    label: "DELIFEQ",
    template: "DELIFEQ KEY tok",
    host: Host::Valkey91,
    allowed: |r| is_int(r, 1),
};

/// One row of the table: a Goblin command's workload, its floor's, and its natives.
struct Row {
    /// What the table calls it.
    name: &'static str,
    /// The calls: `KEY` is the call's key (`k:<i mod keys>`), `#` the call's index.
    goblin: &'static str,
    floor: &'static str,
    /// Natives, each on its own server; a row on that server is set beside it, and a stand-in's
    /// rows on the other servers too (`across`).
    natives: &'static [Native],
    /// The stand-in's rows are set beside the native of another server.
    across: bool,
    /// Run once per key before the counters are zeroed (the locks a release releases).
    setup: Option<&'static str>,
    keys: usize,
    hosts: &'static [Host],
    /// Every call of the workload is allowed: the reply says so.
    allowed: fn(&Reply) -> bool,
    /// Waiters parked before the calls, one per key on a connection of its own, each served by
    /// the call on its key (which then calls each key once), and answered `OK`.
    parked: Option<Parked>,
    /// The anchor of the throughput section: a native or a Lua script, on `Anchor::host`. A
    /// row with waiters parked has no throughput.
    anchor: Anchor,
}

/// The waiter each side parks on a key (`KEY` its key).
#[derive(Clone, Copy)]
struct Parked {
    goblin: &'static str,
    floor: &'static str,
}

/// How many keys a row with parked waiters uses: a connection each.
const PARKED_KEYS: usize = 400;

/// The anchor of the rows that take a free lock: GOBLIN.LOCK on Valkey 9.1.
const LOCK_TAKEN: Anchor = Anchor {
    label: "GOBLIN.LOCK (a free key taken)",
    host: Host::Valkey91,
    template: "GOBLIN.LOCK KEY tok 30000",
    script: None,
    goblin: None,
    floor: None,
    setup: None,
    keyspace: 1_000_000_000,
};

/// What a row's throughput is set against.
#[derive(Clone, Copy)]
struct Anchor {
    label: &'static str,
    host: Host,
    /// The anchor's operation: a template as the rows' (`SHA` a loaded script), `|` between
    /// the commands of one operation.
    template: &'static str,
    script: Option<&'static str>,
    /// The Goblin and floor operations for throughput, when they differ from the row's calls
    /// (a release needs the lock it releases: `SET` first).
    goblin: Option<&'static str>,
    floor: Option<&'static str>,
    /// Run on every key of the keyspace before each sample (the locks an extend extends).
    setup: Option<&'static str>,
    /// How many keys the operations draw from.
    keyspace: u64,
}

const N: usize = 20_000;

fn is_int(reply: &Reply, value: i64) -> bool {
    *reply == Reply::Int(value)
}

fn first_is(reply: &Reply, value: i64) -> bool {
    matches!(reply, Reply::Array(items) if items.first() == Some(&Reply::Int(value)))
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            name: "GOBLIN.INCREX",
            goblin: "GOBLIN.INCREX KEY 60",
            floor: "FLOOR.INCREX KEY 60",
            natives: &[INCREX],
            across: false,
            setup: None,
            keys: 1000,
            hosts: EVERY_HOST,
            parked: None,
            allowed: |r| matches!(r, Reply::Int(n) if *n >= 1),
            anchor: Anchor {
                label: "its Lua idiom (EVALSHA)",
                host: Host::Valkey91,
                template: "EVALSHA SHA 1 KEY 60",
                script: Some(goblin_testkit::INCREX_LUA),
                goblin: None,
                floor: None,
                setup: None,
                keyspace: 10_000,
            },
        },
        Row {
            name: "GOBLIN.FWINDOW",
            goblin: "GOBLIN.FWINDOW KEY 60000",
            floor: "FLOOR.FWINDOW KEY 60000",
            natives: &[],
            across: false,
            setup: None,
            keys: 1000,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| matches!(r, Reply::Array(items) if items.len() == 2),
            anchor: Anchor {
                label: "the limiter libraries' INCR + PEXPIRE + PTTL script (EVALSHA)",
                host: Host::Valkey91,
                template: "EVALSHA SHA 1 KEY 60000",
                script: Some(load::INCR_PTTL_LUA),
                goblin: None,
                floor: None,
                setup: None,
                keyspace: 10_000,
            },
        },
        Row {
            name: "GOBLIN.ZWINDOW",
            goblin: "GOBLIN.ZWINDOW KEY # 10000 1000000000 m#",
            floor: "FLOOR.ZWINDOW KEY # 10000 1000000000 m#",
            natives: &[],
            across: false,
            setup: None,
            keys: 1000,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| is_int(r, 1),
            anchor: Anchor {
                label: "its Lua idiom (EVALSHA)",
                host: Host::Valkey91,
                template: "EVALSHA SHA 1 KEY # 10000 1000000000 m#",
                script: Some(goblin_testkit::ZWINDOW_LUA),
                goblin: None,
                floor: None,
                setup: None,
                keyspace: 10_000,
            },
        },
        Row {
            // Granted at once, on the server's clock: the call that does not wait.
            name: "GOBLIN.BZWINDOW, granted at once",
            goblin: "GOBLIN.BZWINDOW KEY 1000000 1000000000 m# 0",
            floor: "FLOOR.BZWINDOW KEY 1000000 1000000000 m# 0",
            natives: &[],
            across: false,
            setup: None,
            keys: 1000,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| is_int(r, 1),
            anchor: Anchor {
                label: "GOBLIN.ZWINDOW on the server's clock (*)",
                host: Host::Valkey91,
                template: "GOBLIN.ZWINDOW KEY * 1000000 1000000000 m#",
                script: None,
                goblin: None,
                floor: None,
                setup: None,
                keyspace: 10_000,
            },
        },
        Row {
            name: "GOBLIN.SWINDOW",
            goblin: "GOBLIN.SWINDOW KEY 60 1000000000",
            floor: "FLOOR.SWINDOW KEY 60 1000000000",
            natives: &[],
            across: false,
            setup: None,
            keys: 1000,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| first_is(r, 1),
            anchor: Anchor {
                label: "the same counter as a Lua script (EVALSHA)",
                host: Host::Valkey91,
                template: "EVALSHA SHA 1 KEY 60000 1000000000",
                script: Some(SWINDOW_LUA),
                goblin: None,
                floor: None,
                setup: None,
                keyspace: 10_000,
            },
        },
        Row {
            name: "GOBLIN.GCRA",
            goblin: "GOBLIN.GCRA KEY 1000000 1 60",
            floor: "FLOOR.GCRA KEY 1000000 1 60",
            natives: &[GCRA],
            across: false,
            setup: None,
            keys: 1000,
            hosts: EVERY_HOST,
            parked: None,
            allowed: |r| first_is(r, 0),
            anchor: Anchor {
                label: "Redis's GCRA",
                host: Host::Redis810,
                template: "GCRA KEY 1000000 1 60",
                script: None,
                goblin: None,
                floor: None,
                setup: None,
                keyspace: 10_000,
            },
        },
        Row {
            name: "GOBLIN.MGCRA, 1 policy",
            goblin: "GOBLIN.MGCRA 1 KEY 1000000 1 60",
            floor: "FLOOR.MGCRA 1 KEY 1000000 1 60",
            natives: &[GCRA],
            across: false,
            setup: None,
            keys: 1000,
            hosts: EVERY_HOST,
            parked: None,
            allowed: |r| first_is(r, 0),
            anchor: Anchor {
                label: "Redis's GCRA",
                host: Host::Redis810,
                template: "GCRA KEY 1000000 1 60",
                script: None,
                goblin: None,
                floor: None,
                setup: None,
                keyspace: 10_000,
            },
        },
        Row {
            name: "GOBLIN.MGCRA, 4 policies",
            goblin: "GOBLIN.MGCRA 4 {KEY}:s 1000000 1 60 {KEY}:m 1000000 1 60 {KEY}:h 1000000 1 60 {KEY}:d 1000000 1 60",
            floor: "FLOOR.MGCRA 4 {KEY}:s 1000000 1 60 {KEY}:m 1000000 1 60 {KEY}:h 1000000 1 60 {KEY}:d 1000000 1 60",
            natives: &[],
            across: false,
            setup: None,
            keys: 1000,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| first_is(r, 0),
            anchor: Anchor {
                label: "a union script, all or nothing (EVALSHA)",
                host: Host::Valkey91,
                template: "EVALSHA SHA 4 {KEY}:s {KEY}:m {KEY}:h {KEY}:d 1000000 1 60 1000000 1 60 1000000 1 60 1000000 1 60 1",
                script: Some(load::GCRA_UNION_LUA),
                goblin: None,
                floor: None,
                setup: None,
                keyspace: 10_000,
            },
        },
        Row {
            name: "GOBLIN.LOCK",
            goblin: "GOBLIN.LOCK KEY tok 30000",
            floor: "FLOOR.LOCK KEY tok 30000",
            natives: &[],
            across: false,
            setup: None,
            keys: N,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| *r == Reply::Status("OK".into()),
            anchor: Anchor {
                label: "SET NX PX (a free key taken)",
                host: Host::Valkey91,
                template: "SET KEY tok NX PX 30000",
                script: None,
                goblin: None,
                floor: None,
                setup: None,
                keyspace: 1_000_000_000,
            },
        },
        Row {
            name: "GOBLIN.WLOCK",
            goblin: "GOBLIN.WLOCK KEY tok 30000",
            floor: "FLOOR.LOCK KEY tok 30000",
            natives: &[],
            across: false,
            setup: None,
            keys: N,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| *r == Reply::Status("OK".into()),
            anchor: LOCK_TAKEN,
        },
        Row {
            name: "GOBLIN.RLOCK, a free key",
            goblin: "GOBLIN.RLOCK KEY tok 30000",
            floor: "FLOOR.RLOCK KEY tok 30000",
            natives: &[],
            across: false,
            setup: None,
            keys: N,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| *r == Reply::Status("OK".into()),
            anchor: LOCK_TAKEN,
        },
        Row {
            // 20 readers to a key, each let in beside those before it (a compact sorted set).
            name: "GOBLIN.RLOCK, readers joining",
            goblin: "GOBLIN.RLOCK KEY r# 30000",
            floor: "FLOOR.RLOCK KEY r# 30000",
            natives: &[],
            across: false,
            setup: None,
            keys: 1000,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| *r == Reply::Status("OK".into()),
            anchor: Anchor {
                label: "ZADD then PEXPIRE (the writes alone, no check)",
                host: Host::Valkey91,
                template: "ZADD KEY # r#|PEXPIRE KEY 30000",
                script: None,
                goblin: None,
                floor: None,
                setup: None,
                keyspace: 10_000,
            },
        },
        Row {
            name: "GOBLIN.BLOCK, granted at once",
            goblin: "GOBLIN.BLOCK KEY tok 30000 0",
            floor: "FLOOR.LOCK KEY tok 30000 0",
            natives: &[],
            across: false,
            setup: None,
            keys: N,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| *r == Reply::Status("OK".into()),
            anchor: LOCK_TAKEN,
        },
        Row {
            name: "GOBLIN.BWLOCK, granted at once",
            goblin: "GOBLIN.BWLOCK KEY tok 30000 0",
            floor: "FLOOR.LOCK KEY tok 30000 0",
            natives: &[],
            across: false,
            setup: None,
            keys: N,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| *r == Reply::Status("OK".into()),
            anchor: Anchor {
                label: "GOBLIN.WLOCK (a free key taken)",
                host: Host::Valkey91,
                template: "GOBLIN.WLOCK KEY tok 30000",
                script: None,
                goblin: None,
                floor: None,
                setup: None,
                keyspace: 1_000_000_000,
            },
        },
        Row {
            name: "GOBLIN.BRLOCK, granted at once",
            goblin: "GOBLIN.BRLOCK KEY tok 30000 0",
            floor: "FLOOR.RLOCK KEY tok 30000 0",
            natives: &[],
            across: false,
            setup: None,
            keys: N,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| *r == Reply::Status("OK".into()),
            anchor: Anchor {
                label: "GOBLIN.RLOCK (a free key taken)",
                host: Host::Valkey91,
                template: "GOBLIN.RLOCK KEY tok 30000",
                script: None,
                goblin: None,
                floor: None,
                setup: None,
                keyspace: 1_000_000_000,
            },
        },
        Row {
            name: "GOBLIN.CAD",
            goblin: "GOBLIN.CAD KEY tok",
            floor: "FLOOR.CAD KEY tok",
            natives: &[DELEX, DELIFEQ],
            across: false,
            setup: Some("SET KEY tok PX 3600000"),
            keys: N,
            hosts: EVERY_HOST,
            parked: None,
            allowed: |r| is_int(r, 1),
            anchor: Anchor {
                label: "SET PX then DELIFEQ (Valkey's own)",
                host: Host::Valkey91,
                template: "SET KEY tok PX 30000|DELIFEQ KEY tok",
                script: None,
                goblin: Some("SET KEY tok PX 30000|GOBLIN.CAD KEY tok"),
                floor: Some("SET KEY tok PX 30000|FLOOR.CAD KEY tok"),
                setup: None,
                keyspace: 10_000,
            },
        },
        Row {
            // The line's grant: a release that serves the one waiter parked on its key.
            name: "GOBLIN.CAD, serving a waiter",
            goblin: "GOBLIN.CAD KEY tok",
            floor: "FLOOR.HANDOFF KEY tok",
            natives: &[],
            across: false,
            setup: Some("SET KEY tok PX 3600000"),
            keys: PARKED_KEYS,
            hosts: REDIS_ONLY,
            parked: Some(Parked {
                goblin: "GOBLIN.BLOCK KEY w 30000 0",
                floor: "FLOOR.PARK KEY w 30000 0",
            }),
            allowed: |r| is_int(r, 1),
            anchor: Anchor {
                label: "none (a waiter parked before each call)",
                host: Host::Valkey91,
                template: "",
                script: None,
                goblin: None,
                floor: None,
                setup: None,
                keyspace: 0,
            },
        },
        Row {
            name: "GOBLIN.EXTEND",
            goblin: "GOBLIN.EXTEND KEY tok 30000",
            floor: "FLOOR.EXTEND KEY tok 30000",
            natives: &[],
            across: false,
            setup: Some("SET KEY tok PX 3600000"),
            keys: 1000,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| is_int(r, 1),
            anchor: Anchor {
                label: "redis-py's extend script (EVALSHA)",
                host: Host::Valkey91,
                template: "EVALSHA SHA 1 KEY tok 30000",
                script: Some(EXTEND_LUA),
                goblin: Some("GOBLIN.EXTEND KEY tok 30000"),
                floor: Some("FLOOR.EXTEND KEY tok 30000"),
                setup: Some("SET KEY tok PX 3600000"),
                keyspace: 10_000,
            },
        },
        Row {
            name: "INCREX (stand-in)",
            goblin: "INCREX KEY BYINT 1 EX 60 ENX",
            floor: "FLOOR.STANDIN.INCREX KEY BYINT 1 EX 60 ENX",
            natives: &[INCREX],
            across: true,
            setup: None,
            keys: 1000,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| matches!(r, Reply::Array(items) if items.get(1) == Some(&Reply::Int(1))),
            anchor: Anchor {
                label: "the limiter as a Lua script (EVALSHA)",
                host: Host::Valkey91,
                template: "EVALSHA SHA 1 KEY 1000000000 60",
                script: Some(load::INCREX_LIMITER_LUA),
                goblin: Some("INCREX KEY BYINT 1 UBOUND 1000000000 EX 60 ENX"),
                floor: Some("FLOOR.STANDIN.INCREX KEY BYINT 1 UBOUND 1000000000 EX 60 ENX"),
                setup: None,
                keyspace: 10_000,
            },
        },
        Row {
            name: "DELEX (stand-in)",
            goblin: "DELEX KEY IFEQ tok",
            floor: "FLOOR.STANDIN.DELEX KEY IFEQ tok",
            natives: &[DELEX],
            across: true,
            setup: Some("SET KEY tok PX 3600000"),
            keys: N,
            hosts: REDIS_ONLY,
            parked: None,
            allowed: |r| is_int(r, 1),
            anchor: Anchor {
                label: "SET PX then DELIFEQ (Valkey's own)",
                host: Host::Valkey91,
                template: "SET KEY tok PX 30000|DELIFEQ KEY tok",
                script: None,
                goblin: Some("SET KEY tok PX 30000|DELEX KEY IFEQ tok"),
                floor: Some("SET KEY tok PX 30000|FLOOR.STANDIN.DELEX KEY IFEQ tok"),
                setup: None,
                keyspace: 10_000,
            },
        },
    ]
}

/// GOBLIN.SWINDOW's counter as a Lua script on the server's TIME, for the throughput anchor:
/// the same stored text (`start:current:previous`), the same weighting, `SET ... PXAT`.
const SWINDOW_LUA: &str = r#"local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local w = tonumber(ARGV[1])
local start = now - now % w
local cur, prev = 0, 0
local v = redis.call('GET', KEYS[1])
if v then
  local s, c, p = string.match(v, '^(%d+):(%d+):(%d+)$')
  s, c, p = tonumber(s), tonumber(c), tonumber(p)
  if s == start then cur, prev = c, p elseif s + w == start then prev = c end
end
local prev_ttl = 0
if prev > 0 then prev_ttl = start + w - now end
if math.floor(prev * prev_ttl / w) + cur + 1 > tonumber(ARGV[2]) then
  return {0, prev, prev_ttl, cur, start + 2 * w - now}
end
cur = cur + 1
redis.call('SET', KEYS[1], string.format('%d:%d:%d', start, cur, prev), 'PXAT', start + 2 * w)
return {1, prev, prev_ttl, cur, start + 2 * w - now}"#;

/// redis-py's `Lock.extend` script (additive), as the library ships it.
const EXTEND_LUA: &str = r#"local token = redis.call('get', KEYS[1])
if not token or token ~= ARGV[1] then
  return 0
end
local expiration = redis.call('pttl', KEYS[1])
if not expiration then
  expiration = 0
end
if expiration < 0 then
  return 0
end
redis.call('pexpire', KEYS[1], expiration + ARGV[2])
return 1"#;

/// A call of `template`: `KEY` the key, `#` the index, `SHA` the script.
fn call(template: &str, key: &str, index: usize, sha: &str) -> Vec<String> {
    template
        .split_whitespace()
        .map(|word| {
            // `SHA` is a whole word only: EVALSHA holds it too.
            if word == "SHA" {
                return sha.to_string();
            }
            word.replace("KEY", key).replace('#', &index.to_string())
        })
        .collect()
}

/// The key of call `i` of a row, under `prefix`.
fn key_of(prefix: &str, i: usize, keys: usize) -> String {
    format!("{prefix}k:{}", i % keys)
}

struct Config {
    floor: PathBuf,
    module: PathBuf,
    out: Option<PathBuf>,
    hosts: Vec<Host>,
    only: Option<Vec<String>>,
    check: bool,
    count: bool,
    throughput: bool,
    rounds: usize,
    duration: Duration,
    /// Where each count's callgrind dump is kept, if anywhere.
    profile: Option<PathBuf>,
}

impl Config {
    fn from_args() -> Config {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let value = |flag: &str| {
            args.iter()
                .position(|a| a == flag)
                .and_then(|i| args.get(i + 1))
                .cloned()
        };
        let has = |flag: &str| args.iter().any(|a| a == flag);
        let floor = PathBuf::from(value("--floor").expect("--floor PATH (the floor module)"));
        let floor = floor
            .canonicalize()
            .unwrap_or_else(|e| panic!("no floor module at {}: {e}", floor.display()));
        let module = value("--module")
            .map(PathBuf::from)
            .unwrap_or_else(goblin_testkit::module_path)
            .canonicalize()
            .expect("the module");
        let hosts = match value("--servers") {
            Some(list) => list
                .split(',')
                .map(|name| {
                    *Host::ALL
                        .iter()
                        .find(|h| h.name() == name)
                        .unwrap_or_else(|| panic!("unknown server {name}"))
                })
                .collect(),
            None => Host::ALL.to_vec(),
        };
        Config {
            floor,
            module,
            out: value("--out").map(PathBuf::from),
            hosts,
            only: value("--rows").map(|rows| rows.split(',').map(String::from).collect()),
            check: !has("--no-check"),
            count: !has("--no-count"),
            throughput: !has("--no-throughput"),
            rounds: value("--rounds").map_or(3, |r| r.parse().expect("--rounds N")),
            duration: Duration::from_millis(
                value("--duration-ms").map_or(2000, |d| d.parse().expect("--duration-ms N")),
            ),
            profile: value("--profile").map(PathBuf::from),
        }
    }

    fn wants(&self, row: &Row) -> bool {
        self.only.as_ref().is_none_or(|only| {
            only.iter()
                .any(|o| row.goblin.split_whitespace().next() == Some(o.as_str()) || row.name == o)
        })
    }
}

// ---------------------------------------------------------------------------------------------
// 1. The check: Goblin and the floor do the same to the server.

/// Integers within `slack` of each other (Redis 7.0, whose two calls may read different
/// milliseconds), or equal.
fn close(a: i64, b: i64, slack: i64) -> bool {
    a == b || (a.min(b) >= 1000 && (a - b).abs() <= slack)
}

fn same_reply(a: &Reply, b: &Reply, slack: i64) -> bool {
    match (a, b) {
        (Reply::Int(a), Reply::Int(b)) => close(*a, *b, slack),
        (Reply::Array(a), Reply::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_reply(a, b, slack))
        }
        (Reply::Bulk(a), Reply::Bulk(b)) => same_text(a, b, slack),
        _ => a == b,
    }
}

/// Two words of the stream or the data: equal, or numbers within `slack` (a TAT in
/// microseconds gets a thousand times the milliseconds'), or texts of numbers so (`a:b:c`).
fn same_text(a: &[u8], b: &[u8], slack: i64) -> bool {
    if a == b {
        return true;
    }
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    let (a, b): (Vec<&str>, Vec<&str>) = (a.split(':').collect(), b.split(':').collect());
    a.len() == b.len()
        && a.iter().zip(&b).all(|(a, b)| {
            a == b
                || match (a.parse::<i64>(), b.parse::<i64>()) {
                    (Ok(x), Ok(y)) => close(
                        x,
                        y,
                        slack * if x > 1_000_000_000_000_000 { 1000 } else { 1 },
                    ),
                    // Seconds with their milliseconds (a score on the server's clock).
                    _ => match (a.parse::<f64>(), b.parse::<f64>()) {
                        (Ok(x), Ok(y)) if x.min(y) >= 1000.0 => {
                            (x - y).abs() <= slack as f64 / 1000.0 + 1e-6
                        }
                        _ => false,
                    },
                }
        })
}

/// The commands in the AOF files of `dir`, in order, MULTI, EXEC and SELECT left out.
fn aof_commands(dir: &Path) -> Vec<Vec<Vec<u8>>> {
    let aof_dir = dir.join("appendonlydir");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&aof_dir)
        .unwrap_or_else(|e| panic!("{}: {e}", aof_dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".aof"))
        .collect();
    files.sort();
    let mut commands = Vec::new();
    for file in files {
        let bytes = std::fs::read(&file).expect("read the AOF");
        let mut reader = &bytes[..];
        while !reader.is_empty() {
            let reply = goblin_testkit::resp::read_reply(&mut reader).expect("an AOF command");
            let Reply::Array(words) = reply else {
                panic!("an AOF entry that is not a command: {reply:?}")
            };
            let words: Vec<Vec<u8>> = words
                .into_iter()
                .map(|w| match w {
                    Reply::Bulk(b) => b,
                    other => panic!("an AOF word that is not a bulk string: {other:?}"),
                })
                .collect();
            let name = String::from_utf8_lossy(&words[0]).to_ascii_uppercase();
            if !matches!(name.as_str(), "MULTI" | "EXEC" | "SELECT") {
                commands.push(words);
            }
        }
    }
    commands
}

/// The words of a command with its keys under `from` moved under `to`.
fn renamed(words: &[Vec<u8>], from: &str, to: &str) -> Vec<Vec<u8>> {
    words
        .iter()
        .map(|w| String::from_utf8_lossy(w).replace(from, to).into_bytes())
        .collect()
}

fn shown(words: &[Vec<u8>]) -> String {
    words
        .iter()
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs every row's Goblin call and floor call side by side on `host`, and panics at the first
/// difference.
fn check(config: &Config, host: Host, rows: &[&Row]) {
    let slack = if host.has_clock_snapshot() { 0 } else { 3 };
    let server = Server::builder(host.flavor())
        .binary(host.binary())
        .args(["--loadmodule", config.floor.to_str().expect("utf-8 path")])
        .args(AOF_ALWAYS)
        .args(["--notify-keyspace-events", "KAn"])
        .start();
    let mut c = server.conn();
    let mut events = server.conn();
    assert_eq!(
        events.call(&["PSUBSCRIBE", "__keyspace@0__:*"]).array()[0],
        Reply::Bulk(b"psubscribe".to_vec())
    );
    let mut compared = 0;
    for row in rows.iter().filter(|row| row.hosts.contains(&host)) {
        // Enough calls for every path of the workload (a key's first hit and its later ones,
        // a window that evicts), over a few keys.
        let keys = row.keys.min(4);
        let calls = if row.keys == N || row.parked.is_some() {
            keys
        } else {
            keys * 24
        };
        let tag = row
            .goblin
            .split_whitespace()
            .next()
            .unwrap_or("x")
            .to_lowercase();
        let (g, f) = (format!("{tag}:g:"), format!("{tag}:f:"));
        if let Some(setup) = row.setup {
            for i in 0..keys {
                // Both in one MULTI: the same clock.
                let (a, b) = (
                    call(setup, &key_of(&g, i, keys), i, ""),
                    call(setup, &key_of(&f, i, keys), i, ""),
                );
                let replies =
                    c.pipeline(&[vec!["MULTI".to_string()], a, b, vec!["EXEC".to_string()]]);
                assert!(replies[3]
                    .array()
                    .iter()
                    .all(|r| *r == Reply::Status("OK".into())));
            }
        }
        // Each side's waiter parked on each key, on a connection of its own.
        let mut waiters = Vec::new();
        if let Some(parked) = row.parked {
            for i in 0..keys {
                for (prefix, template) in [(&g, parked.goblin), (&f, parked.floor)] {
                    let mut waiter = server.conn();
                    waiter
                        .send(&call(template, &key_of(prefix, i, keys), i, ""))
                        .expect("park a waiter");
                    waiters.push(waiter);
                }
            }
            wait_blocked(&mut c, waiters.len());
        }
        for i in 0..calls {
            // The index as the workload's would be for the same key's same call (a window
            // then evicts as it does there).
            let index = i % keys + row.keys * (i / keys);
            let goblin = call(row.goblin, &key_of(&g, i, keys), index, "");
            let floor = call(row.floor, &key_of(&f, i, keys), index, "");
            let replies = c.pipeline(&[
                vec!["MULTI".to_string()],
                goblin.clone(),
                floor.clone(),
                vec!["EXEC".to_string()],
            ]);
            let exec = replies[3].array();
            assert!(
                same_reply(&exec[0], &exec[1], slack),
                "{}: {} replied {:?}, {} replied {:?}",
                host.label(),
                goblin.join(" "),
                exec[0],
                floor.join(" "),
                exec[1]
            );
            assert!(
                (row.allowed)(&exec[0]),
                "{}: {} was not allowed: {:?}",
                host.label(),
                goblin.join(" "),
                exec[0]
            );
        }
        // Each pair of waiters, Goblin's and the floor's, was served alike.
        for pair in waiters.chunks_mut(2) {
            let replies: Vec<Reply> = pair
                .iter_mut()
                .map(|waiter| waiter.read().expect("a parked waiter's reply"))
                .collect();
            assert!(
                replies.iter().all(|r| *r == Reply::Status("OK".into())),
                "{}: {}: the waiters were answered {replies:?}",
                host.label(),
                row.name
            );
        }
        // Keys whose expiry has passed go now, on both sides alike (a TAT expires at once).
        std::thread::sleep(Duration::from_millis(5));
        for i in 0..keys {
            for prefix in [&g, &f] {
                c.call(&call("EXISTS KEY", &key_of(prefix, i, keys), 0, ""));
                if row.goblin.contains("{KEY}") {
                    for part in ["s", "m", "h", "d"] {
                        c.call(&[
                            "EXISTS".to_string(),
                            format!("{{{}}}:{part}", key_of(prefix, i, keys)),
                        ]);
                    }
                }
            }
        }
        // The data they leave.
        let mut names = |prefix: &str| -> Vec<String> {
            let mut names: Vec<String> = c
                .call(&["KEYS", &format!("*{prefix}*")])
                .array()
                .iter()
                .map(Reply::text)
                .collect();
            names.sort();
            names
        };
        let (gs, fs) = (names(&g), names(&f));
        let expected: Vec<String> = gs.iter().map(|n| n.replace(&g, &f)).collect();
        assert_eq!(
            fs,
            expected,
            "{}: {}: the keys left differ",
            host.label(),
            row.name
        );
        for name in &gs {
            let (kind, value, at) = snapshot(&mut c, name);
            let (fkind, fvalue, fat) = snapshot(&mut c, name.replace(&g, &f));
            let values_agree = match (&value, &fvalue) {
                (Reply::Bulk(a), Reply::Bulk(b)) => same_text(a, b, slack),
                (a, b) => same_reply(a, b, slack),
            };
            assert!(
                kind == fkind && values_agree && close(at, fat, slack),
                "{}: {}: {name} holds {kind} {value:?} until {at}, its floor's {fkind} {fvalue:?} until {fat}",
                host.label(),
                row.name
            );
        }
        compared += 1;
        println!("  {}: {} matches its floor", host.label(), row.name);
    }
    // The effects, command for command, and the events, key by key.
    let aof = aof_commands(&server.dir);
    let mut by_side: BTreeMap<(String, bool), Vec<Vec<Vec<u8>>>> = BTreeMap::new();
    for words in &aof {
        let text = shown(words);
        let Some(at) = text.find(":g:").or_else(|| text.find(":f:")) else {
            continue;
        };
        let tag = text[..at]
            .rsplit([' ', '{'])
            .next()
            .unwrap_or("")
            .to_string();
        let goblin = text[at..].starts_with(":g:");
        let words = if goblin {
            renamed(words, &format!("{tag}:g:"), &format!("{tag}:f:"))
        } else {
            words.clone()
        };
        by_side.entry((tag, goblin)).or_default().push(words);
    }
    for ((tag, goblin), commands) in &by_side {
        if !goblin {
            continue;
        }
        let floor = by_side
            .get(&(tag.clone(), false))
            .cloned()
            .unwrap_or_default();
        // Per key: their order across keys may differ (a lazy expiry).
        let per_key = |commands: &[Vec<Vec<u8>>]| {
            let mut keys: BTreeMap<Vec<u8>, Vec<Vec<Vec<u8>>>> = BTreeMap::new();
            for words in commands {
                keys.entry(words.get(1).cloned().unwrap_or_default())
                    .or_default()
                    .push(words.clone());
            }
            keys
        };
        let (gk, fk) = (per_key(commands), per_key(&floor));
        assert_eq!(
            gk.len(),
            fk.len(),
            "{}: {tag}: effects on different keys",
            host.label()
        );
        for ((key, a), (_, b)) in gk.iter().zip(&fk) {
            let agree = a.len() == b.len()
                && a.iter().zip(b).all(|(a, b)| {
                    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_text(x, y, slack))
                });
            assert!(
                agree,
                "{}: {tag}: {} replicated\n{}\nand its floor\n{}",
                host.label(),
                String::from_utf8_lossy(key),
                a.iter().map(|w| shown(w)).collect::<Vec<_>>().join("\n"),
                b.iter().map(|w| shown(w)).collect::<Vec<_>>().join("\n")
            );
        }
    }
    let mut seen: BTreeMap<(String, bool), Vec<(String, String)>> = BTreeMap::new();
    while let Some(message) = events.reply_within(Duration::from_millis(200)) {
        let parts = match message {
            Reply::Array(parts) | Reply::Push(parts) => parts,
            other => panic!("an event that is not a message: {other:?}"),
        };
        let channel = parts[2].text();
        let event = parts[3].text();
        let key = channel.trim_start_matches("__keyspace@0__:").to_string();
        let Some(at) = key.find(":g:").or_else(|| key.find(":f:")) else {
            continue;
        };
        let tag = key[..at].trim_start_matches('{').to_string();
        let goblin = key[at..].starts_with(":g:");
        let key = key.replace(":g:", ":f:");
        seen.entry((tag, goblin)).or_default().push((key, event));
    }
    for ((tag, goblin), events) in &seen {
        if !goblin {
            continue;
        }
        let per_key = |events: &[(String, String)]| {
            let mut keys: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for (key, event) in events {
                keys.entry(key.clone()).or_default().push(event.clone());
            }
            keys
        };
        let floor = seen.get(&(tag.clone(), false)).cloned().unwrap_or_default();
        let (a, b) = (per_key(events), per_key(&floor));
        let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        for key in keys {
            assert_eq!(
                a.get(key),
                b.get(key),
                "{}: {key}: the keyspace events of Goblin (left) and of its floor (right) differ",
                host.label()
            );
        }
    }
    println!(
        "  {}: {compared} rows: replies, effects ({} commands), events and data alike",
        host.label(),
        aof.len()
    );
    // Dropping the server compares its replica's data with its own.
}

/// Waits until `count` clients are blocked on the server `c` talks to.
fn wait_blocked(c: &mut Conn, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let info = c.call(&["INFO", "clients"]).text();
        let blocked = info
            .lines()
            .find_map(|line| line.strip_prefix("blocked_clients:"))
            .and_then(|n| n.trim().parse::<usize>().ok())
            .unwrap_or(0);
        if blocked >= count {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{blocked} clients blocked, not {count}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------------------------------------
// 2. The count: instructions per call under callgrind.

/// A server under callgrind.
struct Callgrind {
    child: Child,
    port: u16,
    out: PathBuf,
    _dir: TempDir,
}

impl Callgrind {
    fn start(binary: &Path, modules: &[&Path]) -> Callgrind {
        let dir = TempDir::new("callgrind");
        let out = dir.0.join("callgrind.out");
        for _ in 0..5 {
            let port = free_port();
            let mut child = Command::new("valgrind")
                .arg("--tool=callgrind")
                .arg(format!("--callgrind-out-file={}", out.display()))
                .arg(binary)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .args(["--dir", dir.0.to_str().expect("utf-8 dir")])
                .args(
                    modules
                        .iter()
                        .flat_map(|module| ["--loadmodule", module.to_str().expect("utf-8 path")]),
                )
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("valgrind (Debian: apt install valgrind)");
            let deadline = Instant::now() + Duration::from_secs(120);
            while Instant::now() < deadline {
                if let Ok(mut conn) = Conn::connect(port) {
                    if conn.call(&["PING"]) == Reply::Status("PONG".into()) {
                        return Callgrind {
                            child,
                            port,
                            out,
                            _dir: dir,
                        };
                    }
                }
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("{} did not start under callgrind", binary.display());
    }

    fn control(&self, what: &str) {
        let status = Command::new("callgrind_control")
            .arg(what)
            .arg(self.child.id().to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("callgrind_control");
        assert!(status.success(), "callgrind_control {what} failed");
    }

    /// Runs each of `runs` in turn on this one server, each on an empty keyspace (FLUSHALL, then
    /// its setup), and returns the server's `call()` per call of each run's calls.
    fn per_call(mut self, runs: &[Run]) -> Vec<f64> {
        let mut conn = Conn::connect(self.port).expect("connect");
        let exec = |conn: &mut Conn, commands: &[Vec<String>], check: &dyn Fn(&Reply) -> bool| {
            for chunk in commands.chunks(500) {
                for (reply, command) in conn.pipeline(chunk).iter().zip(chunk) {
                    assert!(check(reply), "{}: {reply:?}", command.join(" "));
                }
            }
        };
        let mut figures = Vec::new();
        for (dump, run) in runs.iter().enumerate() {
            assert_eq!(conn.call(&["FLUSHALL", "SYNC"]), Reply::Status("OK".into()));
            exec(&mut conn, &run.setup, &|r| !r.is_error());
            let mut waiters: Vec<Conn> = run
                .parked
                .iter()
                .map(|command| {
                    let mut waiter = Conn::connect(self.port).expect("connect a waiter");
                    waiter.send(command).expect("park a waiter");
                    waiter
                })
                .collect();
            wait_blocked(&mut conn, waiters.len());
            self.control("-z");
            exec(&mut conn, &run.calls, &run.allowed);
            // The waiters' replies are written outside `call()`, as the server turns its loop.
            for waiter in &mut waiters {
                let reply = waiter.read().expect("a parked waiter's reply");
                assert_eq!(reply, Reply::Status("OK".into()), "a parked waiter's reply");
            }
            self.control("-d");
            drop(waiters);
            // callgrind numbers its dumps from 1.
            let dump = PathBuf::from(format!("{}.{}", self.out.display(), dump + 1));
            let (inclusive, count) = call_cost(&dump, !run.parked.is_empty());
            assert_eq!(
                count,
                run.calls.len() as u64,
                "callgrind saw {count} calls of call(), the workload made {}",
                run.calls.len()
            );
            if let Some(keep) = &run.keep {
                std::fs::copy(&dump, keep).unwrap_or_else(|e| {
                    panic!("keep {} as {}: {e}", dump.display(), keep.display())
                });
            }
            figures.push(inclusive as f64 / count as f64);
        }
        let _ = conn.send(&["SHUTDOWN", "NOSAVE"]);
        let _ = self.child.wait();
        figures
    }
}

/// One counted workload: its setup (not counted), its calls, what each reply must be, and where
/// `--profile` keeps its dump.
struct Run {
    setup: Vec<Vec<String>>,
    /// Waiters parked after the setup, each on a connection of its own.
    parked: Vec<Vec<String>>,
    calls: Vec<Vec<String>>,
    allowed: fn(&Reply) -> bool,
    keep: Option<PathBuf>,
}

/// `call()`'s inclusive instructions in a callgrind dump, and how many times it ran; with
/// `woken`, those of `moduleHandleBlockedClients` too, where the server answers the clients a
/// module woke (outside `call()`, as it turns its loop).
fn call_cost(dump: &Path, woken: bool) -> (u64, u64) {
    let output = Command::new("callgrind_annotate")
        .args(["--tree=caller", "--inclusive=yes"])
        .arg(dump)
        .output()
        .expect("callgrind_annotate");
    let text = String::from_utf8_lossy(&output.stdout);
    let number = |line: &str| -> u64 {
        line.split_whitespace()
            .next()
            .unwrap_or("0")
            .replace(',', "")
            .parse()
            .unwrap_or(0)
    };
    // A block: its callers (`<`), then the function (`*`). `call` is server.c's, or the
    // exported symbol of a stripped build (Redis 7.0's Debian package).
    let mut callers = 0;
    let mut answered = 0;
    let mut found = None;
    for line in text.lines() {
        if line.contains("  < ") {
            if let Some(times) = line.split(" (").nth(2).or_else(|| line.split(" (").nth(1)) {
                if let Some(n) = times
                    .strip_suffix("x)")
                    .or_else(|| times.split("x)").next())
                {
                    callers += n.replace(',', "").parse::<u64>().unwrap_or(0);
                }
            }
        } else if line.contains("  *  ") {
            let function = line.split("  *  ").nth(1).unwrap_or("");
            let name = function.split(" [").next().unwrap_or("");
            // The first of each is the function itself (the largest): the next ones with its
            // name are lines of other files inlined into it.
            if name.ends_with(":call") && found.is_none() {
                found = Some((number(line), callers));
            } else if name.ends_with(":moduleHandleBlockedClients") && answered == 0 {
                answered = number(line);
            }
            callers = 0;
        } else if line.trim().is_empty() {
            callers = 0;
        }
    }
    let Some((inclusive, count)) = found else {
        panic!("no call() in {}", dump.display());
    };
    if woken {
        assert!(
            answered > 0,
            "no moduleHandleBlockedClients in {}",
            dump.display()
        );
    }
    (inclusive + if woken { answered } else { 0 }, count)
}

/// One row's figures on one server.
#[derive(Default, Clone)]
struct Counted {
    goblin: Option<f64>,
    floor: Option<f64>,
    /// The natives of the row's server (label, figure).
    natives: Vec<(&'static str, f64)>,
}

fn workload(template: &str, prefix: &str, keys: usize, calls: usize) -> Vec<Vec<String>> {
    (0..calls)
        .map(|i| call(template, &key_of(prefix, i, keys), i, ""))
        .collect()
}

/// Where `--profile` keeps the dump of one count: the server, the row, the side. The row's
/// name is kept beside, in `rows.tsv` (the file name, a tab, the name).
fn profile_path(config: &Config, host: Host, row: &Row, side: &str) -> Option<PathBuf> {
    let dir = config.profile.as_ref()?;
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let slug = profile_slug(row);
    let index = dir.join("rows.tsv");
    let known = std::fs::read_to_string(&index).unwrap_or_default();
    if !known
        .lines()
        .any(|line| line.split('\t').next() == Some(slug.as_str()))
    {
        std::fs::write(&index, format!("{known}{slug}\t{}\n", row.name))
            .unwrap_or_else(|e| panic!("{}: {e}", index.display()));
    }
    Some(dir.join(format!("{}-{slug}-{side}.out", host.name())))
}

/// A row's name as a file name: lower case, anything but letters and digits a dash.
fn profile_slug(row: &Row) -> String {
    row.name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// Row `row`'s workload of `template` (after the row's setup), as one run.
fn run(
    row: &Row,
    template: &str,
    parked: Option<&str>,
    allowed: fn(&Reply) -> bool,
    keep: Option<PathBuf>,
) -> Run {
    Run {
        setup: row
            .setup
            .map(|s| workload(s, "", row.keys, row.keys))
            .unwrap_or_default(),
        parked: parked
            .map(|p| workload(p, "", row.keys, row.keys))
            .unwrap_or_default(),
        // Each parked waiter is served once: one call a key.
        calls: workload(
            template,
            "",
            row.keys,
            if parked.is_some() { row.keys } else { N },
        ),
        allowed,
        keep,
    }
}

/// Each row on each of its servers: Goblin, the floor and the server's natives counted in one
/// process, with both modules loaded, one after another on the same keys. So they meet the
/// same hash seeds: the server's command table, which `RedisModule_Replicate` looks a name up
/// in, and the keyspace are laid out alike for all of them (in separate processes a replicated
/// command's lookup alone moves by up to about 170 instructions a call, bucket chains differing
/// from seed to seed).
fn count(config: &Config, rows: &[&Row]) -> BTreeMap<(usize, Host), Counted> {
    let mut figures: BTreeMap<(usize, Host), Counted> = BTreeMap::new();
    let modules = [config.module.as_path(), config.floor.as_path()];
    for (index, row) in rows.iter().enumerate() {
        for &host in row.hosts.iter().filter(|h| config.hosts.contains(h)) {
            let natives: Vec<&Native> = row.natives.iter().filter(|n| n.host == host).collect();
            // The floor first: once a Goblin waiter has waited, Goblin follows keyspace events
            // (it subscribes when the first waiter waits), and every write after would pay
            // for its callback.
            let mut runs = vec![
                run(
                    row,
                    row.floor,
                    row.parked.map(|p| p.floor),
                    row.allowed,
                    profile_path(config, host, row, "floor"),
                ),
                run(
                    row,
                    row.goblin,
                    row.parked.map(|p| p.goblin),
                    row.allowed,
                    profile_path(config, host, row, "goblin"),
                ),
            ];
            runs.extend(natives.iter().map(|native| {
                let keep = profile_path(config, host, row, native.label);
                run(row, native.template, None, native.allowed, keep)
            }));
            let counted = Callgrind::start(&host.binary(), &modules).per_call(&runs);
            let (floor, goblin) = (counted[0], counted[1]);
            eprintln!(
                "  {:<24} {:<26} Goblin {goblin:>7.0}  floor {floor:>7.0}  {:.3}x",
                host.label(),
                row.name,
                goblin / floor
            );
            let entry = figures.entry((index, host)).or_default();
            entry.goblin = Some(goblin);
            entry.floor = Some(floor);
            for (native, figure) in natives.iter().zip(&counted[2..]) {
                eprintln!(
                    "  {:<24} {:<26} native {figure:>7.0}",
                    host.label(),
                    native.label
                );
                entry.natives.push((native.label, *figure));
            }
        }
        // A stand-in's native, on a server the row does not run on.
        for native in row.natives {
            if row.hosts.contains(&native.host) || !config.hosts.contains(&native.host) {
                continue;
            }
            let keep = profile_path(config, native.host, row, native.label);
            let runs = [run(row, native.template, None, native.allowed, keep)];
            let figure = Callgrind::start(&native.host.binary(), &modules).per_call(&runs)[0];
            eprintln!(
                "  {:<24} {:<26} native {figure:>7.0}",
                native.host.label(),
                native.label
            );
            let entry = figures.entry((index, native.host)).or_default();
            entry.natives.push((native.label, figure));
        }
    }
    figures
}

// ---------------------------------------------------------------------------------------------
// 3. Throughput, side by side.

/// Operations per second of `template` on `port`: `conns` connections, each `depth` operations
/// in flight, for `duration`. Keys drawn from `keyspace`; `#` a clock shared by all connections.
fn throughput(port: u16, template: &str, sha: &str, keyspace: u64, duration: Duration) -> f64 {
    const CONNS: usize = 50;
    const DEPTH: usize = 16;
    let clock = Arc::new(AtomicU64::new(1_000_000));
    let stop = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(CONNS + 1));
    let threads: Vec<_> = (0..CONNS)
        .map(|client| {
            let (clock, stop, barrier) = (clock.clone(), stop.clone(), barrier.clone());
            let (template, sha) = (template.to_string(), sha.to_string());
            std::thread::spawn(move || {
                let mut conn = Conn::connect(port).expect("connect");
                let mut rng = Rng::new(0x5eed ^ ((client as u64 + 1) * 0x9e37_79b9));
                let mut buf = Vec::new();
                let mut done = 0u64;
                barrier.wait();
                while !stop.load(Ordering::Relaxed) {
                    buf.clear();
                    let mut replies = 0;
                    for _ in 0..DEPTH {
                        let key = format!("t:{}", rng.below(keyspace));
                        let now = clock.fetch_add(1, Ordering::Relaxed) as usize;
                        for command in template.split('|') {
                            encode(&call(command, &key, now, &sha), &mut buf);
                            replies += 1;
                        }
                    }
                    conn.write_raw(&buf).expect("send");
                    for _ in 0..replies {
                        let reply = conn.read().expect("reply");
                        assert!(!reply.is_error(), "{template}: {reply:?}");
                    }
                    done += DEPTH as u64;
                }
                done
            })
        })
        .collect();
    barrier.wait();
    let started = Instant::now();
    std::thread::sleep(duration);
    stop.store(true, Ordering::Relaxed);
    let total: u64 = threads
        .into_iter()
        .map(|t| t.join().expect("load thread"))
        .sum();
    total as f64 / started.elapsed().as_secs_f64()
}

/// (Goblin / anchor, floor / anchor) per row, pipelined, median of the rounds.
fn throughputs(config: &Config, rows: &[&Row]) -> Vec<(usize, f64, f64)> {
    let mut results = Vec::new();
    let mut servers: BTreeMap<Host, Server> = BTreeMap::new();
    for (index, row) in rows.iter().enumerate() {
        let host = row.anchor.host;
        if !config.hosts.contains(&host) || row.parked.is_some() {
            continue;
        }
        let server = servers.entry(host).or_insert_with(|| {
            Server::builder(host.flavor())
                .binary(host.binary())
                .args(["--loadmodule", config.floor.to_str().expect("utf-8 path")])
                .args(["--maxclients", "1000"])
                // The benchmark measures a server alone.
                .without_replica()
                .start()
        });
        let mut c = server.conn();
        let sha = row
            .anchor
            .script
            .map(|script| c.call(&["SCRIPT", "LOAD", script]).text())
            .unwrap_or_default();
        let ops = [
            row.anchor.goblin.unwrap_or(row.goblin),
            row.anchor.floor.unwrap_or(row.floor),
            row.anchor.template,
        ];
        let mut samples = [Vec::new(), Vec::new(), Vec::new()];
        for round in 0..config.rounds {
            for which in 0..3 {
                // A B C, then C B A: a slow patch of the machine hits all alike.
                let which = if round % 2 == 0 { which } else { 2 - which };
                assert_eq!(c.call(&["FLUSHALL", "SYNC"]), Reply::Status("OK".into()));
                if let Some(setup) = row.anchor.setup {
                    let keys: Vec<Vec<String>> = (0..row.anchor.keyspace as usize)
                        .map(|i| call(setup, &format!("t:{i}"), i, ""))
                        .collect();
                    for chunk in keys.chunks(1000) {
                        assert!(c.pipeline(chunk).iter().all(|r| !r.is_error()));
                    }
                }
                let (op, keyspace) = (ops[which], row.anchor.keyspace);
                samples[which].push(throughput(server.port, op, &sha, keyspace, config.duration));
            }
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let [g, f, a] = samples.map(median);
        eprintln!(
            "  {:<24} {:<26} Goblin {g:>9.0}/s  floor {f:>9.0}/s  {} {a:>9.0}/s",
            host.label(),
            row.name,
            row.anchor.label
        );
        results.push((index, g / a, f / a));
    }
    results
}

// ---------------------------------------------------------------------------------------------
// The report.

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "-".into(),
    }
}

fn figure(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| format!("{v:.0}"))
}

fn report(
    config: &Config,
    rows: &[&Row],
    counted: &BTreeMap<(usize, Host), Counted>,
    speeds: &[(usize, f64, f64)],
) -> String {
    let mut out = String::new();
    let date = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    out.push_str("# Instructions per call: Goblin, its floor, the natives\n\n");
    out.push_str(&format!(
        "Written by `scripts/instructions.sh` on {date}. Counted under callgrind: the whole of the\n\
         server's `call()` per command (the command, its keyspace work, its propagation), inclusive,\n\
         for each row's workload of {N} calls, every call allowed (each reply checked), after its\n\
         setup; the line's grant {PARKED_KEYS} calls, each serving the waiter parked on its key, with\n\
         `moduleHandleBlockedClients`, where the server answers the waiters. Goblin, its floor and\n\
         the natives of a row in one server process with both modules loaded, each from an empty\n\
         keyspace on the same keys. Exact, unlike throughput on this machine. **Goblin** is\n\
         `target/release/libgoblin.so`; **floor** the same row's call on the floor module\n\
         (`bench/floor`), which does the same server-facing work on the cheapest module API calls\n\
         and nothing else, checked alike call for call (replies, replicated effects, keyspace events,\n\
         data) before it is counted; **native** the server's own command where it has one. The\n\
         method and what the floor leaves out: [the benchmark](../../docs/benchmark.md#the-floor).\n\n"
    ));
    out.push_str("| command | workload | server | Goblin | floor | native | Goblin / floor | floor / native |\n");
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|\n");
    for (index, row) in rows.iter().enumerate() {
        for host in Host::ALL {
            let Some(c) = counted.get(&(index, host)) else {
                continue;
            };
            if c.goblin.is_none() && c.natives.is_empty() {
                continue;
            }
            // A stand-in's native runs on another server.
            let mut natives: Vec<(String, f64)> = c
                .natives
                .iter()
                .map(|(label, n)| (format!("{n:.0} ({label})"), *n))
                .collect();
            if row.across && c.goblin.is_some() {
                for native in row.natives {
                    if let Some(n) = counted
                        .get(&(index, native.host))
                        .and_then(|c| c.natives.iter().find(|(l, _)| *l == native.label))
                    {
                        natives.push((
                            format!(
                                "{:.0} ({}, {})",
                                n.1,
                                native.label,
                                native.host.flavor().label()
                            ),
                            n.1,
                        ));
                    }
                }
            }
            let workload = format!("`{}`", row.goblin.replace("KEY", "k"));
            if c.goblin.is_none() {
                for (text, _) in &natives {
                    out.push_str(&format!(
                        "| {} | {workload} | {} | - | - | {text} | - | - |\n",
                        row.name,
                        host.label()
                    ));
                }
                continue;
            }
            let first = natives.first().map(|(_, n)| *n);
            let native_text = if natives.is_empty() {
                "-".to_string()
            } else {
                natives
                    .iter()
                    .map(|(t, _)| t.clone())
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            let floor_native = if natives.len() > 1 {
                natives
                    .iter()
                    .map(|(_, n)| ratio(c.floor, Some(*n)))
                    .collect::<Vec<_>>()
                    .join("; ")
            } else {
                ratio(c.floor, first)
            };
            out.push_str(&format!(
                "| {} | {workload} | {} | {} | {} | {native_text} | {} | {floor_native} |\n",
                row.name,
                host.label(),
                figure(c.goblin),
                figure(c.floor),
                ratio(c.goblin, c.floor),
            ));
        }
    }
    if !speeds.is_empty() {
        out.push_str(&format!(
            "\n## Throughput beside it\n\n\
             Operations per second, pipelined 16 deep on 50 connections, each row's three operations\n\
             run in turn on one server (A B C, C B A, ...), median of {} rounds of {:.0?}, in the\n\
             same run; only the ratios are quoted. A release is measured with the `SET` that takes the\n\
             lock it releases, so its ratio is the whole cycle's.\n\n\
             | command | anchor | server | Goblin / anchor | floor / anchor |\n|---|---|---|---:|---:|\n",
            config.rounds, config.duration
        ));
        for (index, goblin, floor) in speeds {
            let row = rows[*index];
            out.push_str(&format!(
                "| {} | {} | {} | {goblin:.2}x | {floor:.2}x |\n",
                row.name,
                row.anchor.label,
                row.anchor.host.label()
            ));
        }
    }
    out
}

fn main() {
    let config = Config::from_args();
    // The test kit's servers load this build of Goblin.
    std::env::set_var("GOBLIN_MODULE", &config.module);
    let all = rows();
    let rows: Vec<&Row> = all.iter().filter(|row| config.wants(row)).collect();
    if config.check {
        eprintln!("instructions: Goblin and its floor, call for call");
        for &host in &config.hosts {
            check(&config, host, &rows);
        }
    }
    let counted = if config.count {
        eprintln!("instructions: counting under callgrind ({N} calls a run)");
        count(&config, &rows)
    } else {
        BTreeMap::new()
    };
    let speeds = if config.throughput {
        eprintln!("instructions: throughput, side by side");
        throughputs(&config, &rows)
    } else {
        Vec::new()
    };
    let markdown = report(&config, &rows, &counted, &speeds);
    /// Where the generated part of the results file ends and the part written by hand begins.
    const HAND_WRITTEN: &str = "\n## Report";
    match &config.out {
        Some(out) => {
            // The hand-written report under `## Report` (where the rest over the floor goes)
            // is kept: only the tables above it are generated.
            let kept = std::fs::read_to_string(out)
                .ok()
                .and_then(|old| old.find(HAND_WRITTEN).map(|at| old[at..].to_string()))
                .unwrap_or_default();
            let markdown = if kept.is_empty() {
                markdown
            } else {
                format!("{}\n{kept}", markdown.trim_end())
            };
            std::fs::write(out, &markdown).expect("write the report");
            eprintln!("instructions: wrote {}", out.display());
        }
        None => print!("{markdown}"),
    }
}
