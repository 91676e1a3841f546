//! A closed-loop load generator: N connections, each on its own thread, each sending a
//! pipeline of `depth` operations and waiting for all replies before the next. Throughput is
//! operations per second over the whole run; latency is the round trip of one pipeline.

use goblin_testkit::resp::encode;
use goblin_testkit::{Conn, Reply, Rng};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Distinct counter keys and sorted-set keys the workloads spread over.
const COUNTER_KEYS: u64 = 10_000;
const WINDOW_KEYS: u64 = 1_000;
/// In ticks of the shared clock: about ten members per window key at any time, so each
/// ZWINDOW call evicts about one member and admits one.
const WINDOW_TICKS: u64 = 10 * WINDOW_KEYS;
/// Never the reason for a rejection: the benchmark measures the admit path.
const WINDOW_LIMIT: &str = "1000000000";
const COUNTER_SECONDS: &str = "3600";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Workload {
    Incr,
    Increx,
    IncrexEvalsha,
    IncrexFcall,
    MultiIncrExpireNx,
    /// Redis's documented rate limiter on INCREX: the native command on Redis 8.10, Goblin's
    /// stand-in on the other servers.
    IncrexLimiter,
    IncrexLimiterEvalsha,
    Zadd,
    Zwindow,
    ZwindowEvalsha,
    ZwindowFcall,
}

pub const COUNTER_GROUP: [Workload; 7] = [
    Workload::Incr,
    Workload::Increx,
    Workload::IncrexEvalsha,
    Workload::IncrexFcall,
    Workload::MultiIncrExpireNx,
    Workload::IncrexLimiter,
    Workload::IncrexLimiterEvalsha,
];
pub const WINDOW_GROUP: [Workload; 4] = [
    Workload::Zadd,
    Workload::Zwindow,
    Workload::ZwindowEvalsha,
    Workload::ZwindowFcall,
];

impl Workload {
    pub fn label(self) -> &'static str {
        match self {
            Workload::Incr => "INCR",
            Workload::Increx => "GOBLIN.INCREX",
            Workload::IncrexEvalsha => "INCREX idiom, EVALSHA",
            Workload::IncrexFcall => "INCREX idiom, FCALL",
            Workload::MultiIncrExpireNx => "MULTI INCR EXPIRE NX EXEC",
            Workload::IncrexLimiter => "INCREX BYINT 1 UBOUND 100 EX 60 ENX",
            Workload::IncrexLimiterEvalsha => "INCREX limiter as Lua, EVALSHA",
            Workload::Zadd => "ZADD",
            Workload::Zwindow => "GOBLIN.ZWINDOW",
            Workload::ZwindowEvalsha => "ZWINDOW idiom, EVALSHA",
            Workload::ZwindowFcall => "ZWINDOW idiom, FCALL",
        }
    }

    /// The core command each workload is compared with.
    pub fn baseline(self) -> Workload {
        if COUNTER_GROUP.contains(&self) {
            Workload::Incr
        } else {
            Workload::Zadd
        }
    }
}

/// Redis's rate-limiter pattern (`INCREX k BYINT 1 UBOUND limit EX seconds ENX`) as the Lua
/// script a server without INCREX needs: refuse at the limit, count, arm the window once.
pub const INCREX_LIMITER_LUA: &str = r#"local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count + 1 > tonumber(ARGV[1]) then return {count, 0} end
count = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) == -1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return {count, 1}"#;

/// What every connection shares: the scripts' digests and the clock for `now`.
pub struct Shared {
    pub increx_limiter_sha: String,
    pub increx_sha: String,
    pub zwindow_sha: String,
    pub clock: AtomicU64,
}

/// The Lua idioms as a function library, for FCALL.
pub fn function_library() -> String {
    let wrap = |name: &str, body: &str| {
        format!(
            "redis.register_function('{name}', function(keys, args)\nlocal KEYS, ARGV = keys, args\n{body}\nend)\n"
        )
    };
    format!(
        "#!lua name=goblinbench\n{}{}",
        wrap("increx_idiom", goblin_testkit::INCREX_LUA),
        wrap("zwindow_idiom", goblin_testkit::ZWINDOW_LUA)
    )
}

struct OpWriter<'a> {
    shared: &'a Shared,
    rng: Rng,
    client: usize,
    seq: u64,
}

impl OpWriter<'_> {
    /// Appends one operation to `out`; returns how many commands (replies) it is.
    fn write(&mut self, workload: Workload, out: &mut Vec<u8>) -> usize {
        self.seq += 1;
        let counter = format!("counter:{}", self.rng.below(COUNTER_KEYS));
        let window = format!("window:{}", self.rng.below(WINDOW_KEYS));
        let now = || {
            self.shared
                .clock
                .fetch_add(1, Ordering::Relaxed)
                .to_string()
        };
        let member = format!("{}-{}", self.client, self.seq);
        let ticks = WINDOW_TICKS.to_string();
        let (increx_sha, zwindow_sha) = (&self.shared.increx_sha, &self.shared.zwindow_sha);
        match workload {
            Workload::Incr => encode(&["INCR", &counter], out),
            Workload::Increx => encode(&["GOBLIN.INCREX", &counter, COUNTER_SECONDS], out),
            Workload::IncrexEvalsha => encode(
                &["EVALSHA", increx_sha, "1", &counter, COUNTER_SECONDS],
                out,
            ),
            Workload::IncrexFcall => encode(
                &["FCALL", "increx_idiom", "1", &counter, COUNTER_SECONDS],
                out,
            ),
            Workload::IncrexLimiter => encode(
                &[
                    "INCREX", &counter, "BYINT", "1", "UBOUND", "100", "EX", "60", "ENX",
                ],
                out,
            ),
            Workload::IncrexLimiterEvalsha => encode(
                &[
                    "EVALSHA",
                    &self.shared.increx_limiter_sha,
                    "1",
                    &counter,
                    "100",
                    "60",
                ],
                out,
            ),
            Workload::MultiIncrExpireNx => {
                encode(&["MULTI"], out);
                encode(&["INCR", &counter], out);
                encode(&["EXPIRE", &counter, COUNTER_SECONDS, "NX"], out);
                encode(&["EXEC"], out);
                return 4;
            }
            // The baseline at the same set size as ZWINDOW's (about ten members per key): a
            // member drawn from ten per key, so ZADD moves scores instead of growing the sets.
            Workload::Zadd => {
                let reused = format!("m{}", self.rng.below(WINDOW_TICKS / WINDOW_KEYS));
                encode(&["ZADD", &window, &now(), &reused], out)
            }
            Workload::Zwindow => encode(
                &[
                    "GOBLIN.ZWINDOW",
                    &window,
                    &now(),
                    &ticks,
                    WINDOW_LIMIT,
                    &member,
                ],
                out,
            ),
            Workload::ZwindowEvalsha => encode(
                &[
                    "EVALSHA",
                    zwindow_sha,
                    "1",
                    &window,
                    &now(),
                    &ticks,
                    WINDOW_LIMIT,
                    &member,
                ],
                out,
            ),
            Workload::ZwindowFcall => encode(
                &[
                    "FCALL",
                    "zwindow_idiom",
                    "1",
                    &window,
                    &now(),
                    &ticks,
                    WINDOW_LIMIT,
                    &member,
                ],
                out,
            ),
        }
        1
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub ops_per_sec: f64,
    pub p50_us: f64,
    pub p99_us: f64,
}

/// Runs `workload` for `duration` on `conns` connections with `depth` operations in flight
/// on each. Panics on any error reply: a benchmark of errors measures nothing.
pub fn run(
    port: u16,
    shared: &Arc<Shared>,
    workload: Workload,
    conns: usize,
    depth: usize,
    duration: Duration,
) -> Sample {
    let barrier = Arc::new(Barrier::new(conns + 1));
    let threads: Vec<_> = (0..conns)
        .map(|client| {
            let (barrier, shared) = (barrier.clone(), shared.clone());
            std::thread::spawn(move || {
                let mut conn = Conn::connect(port).expect("connect");
                let mut ops = OpWriter {
                    shared: &shared,
                    rng: Rng::new(0x9e37_79b9 ^ ((client as u64 + 1) * 0x1000_0001)),
                    client,
                    seq: 0,
                };
                let mut latencies = Vec::new();
                let mut buf = Vec::new();
                let mut done = 0u64;
                barrier.wait();
                let deadline = Instant::now() + duration;
                while Instant::now() < deadline {
                    buf.clear();
                    let replies: usize = (0..depth).map(|_| ops.write(workload, &mut buf)).sum();
                    let sent = Instant::now();
                    conn.write_raw(&buf).expect("send pipeline");
                    for _ in 0..replies {
                        match conn.read().expect("reply") {
                            Reply::Error(e) => panic!("{}: error reply {e}", workload.label()),
                            Reply::Array(items) if items.iter().any(Reply::is_error) => {
                                panic!("{}: error in {items:?}", workload.label())
                            }
                            _ => {}
                        }
                    }
                    latencies.push(sent.elapsed().as_nanos() as u64);
                    done += depth as u64;
                }
                (done, latencies)
            })
        })
        .collect();
    barrier.wait();
    let started = Instant::now();
    let mut total = 0;
    let mut latencies = Vec::new();
    for thread in threads {
        let (done, mut lat) = thread.join().expect("load thread");
        total += done;
        latencies.append(&mut lat);
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let percentile = |p: f64| {
        let index = ((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1));
        latencies.get(index).copied().unwrap_or(0) as f64 / 1000.0
    };
    Sample {
        ops_per_sec: total as f64 / elapsed,
        p50_us: percentile(0.50),
        p99_us: percentile(0.99),
    }
}
