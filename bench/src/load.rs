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
    /// GOBLIN.GCRA, 101 at once then 10 a second, per key.
    Gcra,
    /// Redis's own GCRA, with the same limits: only on Redis 8.10 built with it.
    GcraNative,
    /// GCRA as a Lua script on the server's TIME, as redis-cell's CL.THROTTLE computes it.
    GcraEvalsha,
    /// What the popular limiter libraries run: INCR, PEXPIRE on the first hit, PTTL.
    IncrPttlEvalsha,
    Zadd,
    Zwindow,
    /// GOBLIN.ZWINDOW with `now` = `*`, the server's clock, at the set size of `Zwindow`: its
    /// window (`Shared::server_clock_window_ms`) holds about ten members per key at the rate
    /// the client-time run just reached.
    ZwindowServerClock,
    ZwindowEvalsha,
    ZwindowFcall,
    /// GOBLIN.MGCRA with 1, 2 and 4 policies, each key of a set under one hash tag.
    Mgcra1,
    Mgcra2,
    Mgcra4,
    /// The same four policies as four GOBLIN.GCRA calls, pipelined: one request, four calls
    /// (not all or nothing).
    Gcra4Pipelined,
    /// The four policies all or nothing in one Lua script (the union script such a set needs
    /// without Goblin), EVALSHA.
    GcraUnion4Evalsha,
}

pub const COUNTER_GROUP: [Workload; 11] = [
    Workload::Incr,
    Workload::Increx,
    Workload::IncrexEvalsha,
    Workload::IncrexFcall,
    Workload::MultiIncrExpireNx,
    Workload::IncrexLimiter,
    Workload::IncrexLimiterEvalsha,
    Workload::Gcra,
    Workload::GcraNative,
    Workload::GcraEvalsha,
    Workload::IncrPttlEvalsha,
];
/// In this order: `Zwindow` sizes the window of `ZwindowServerClock`, which runs after it.
/// Sets of GCRA policies, one decision per request, against GOBLIN.MGCRA with one policy.
pub const POLICY_GROUP: [Workload; 5] = [
    Workload::Mgcra1,
    Workload::Mgcra2,
    Workload::Mgcra4,
    Workload::Gcra4Pipelined,
    Workload::GcraUnion4Evalsha,
];
pub const WINDOW_GROUP: [Workload; 5] = [
    Workload::Zadd,
    Workload::Zwindow,
    Workload::ZwindowServerClock,
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
            Workload::Gcra => "GOBLIN.GCRA",
            Workload::GcraNative => "GCRA (Redis's, 8.10 built with it)",
            Workload::GcraEvalsha => "GCRA as Lua (redis-cell's), EVALSHA",
            Workload::IncrPttlEvalsha => "INCR + PTTL limiter Lua, EVALSHA",
            Workload::Zadd => "ZADD",
            Workload::Zwindow => "GOBLIN.ZWINDOW",
            Workload::ZwindowServerClock => "GOBLIN.ZWINDOW now = *",
            Workload::ZwindowEvalsha => "ZWINDOW idiom, EVALSHA",
            Workload::ZwindowFcall => "ZWINDOW idiom, FCALL",
            Workload::Mgcra1 => "GOBLIN.MGCRA, 1 policy",
            Workload::Mgcra2 => "GOBLIN.MGCRA, 2 policies",
            Workload::Mgcra4 => "GOBLIN.MGCRA, 4 policies",
            Workload::Gcra4Pipelined => "4 GOBLIN.GCRA calls, pipelined",
            Workload::GcraUnion4Evalsha => "4 policies as Lua (all or nothing), EVALSHA",
        }
    }

    /// The core command each workload is compared with.
    pub fn baseline(self) -> Workload {
        if COUNTER_GROUP.contains(&self) {
            Workload::Incr
        } else if POLICY_GROUP.contains(&self) {
            Workload::Mgcra1
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

/// GCRA as redis-cell computes it (CL.THROTTLE's reply), as a script on the server's TIME:
/// ARGV = max_burst, count per period, period (s), quantity. Written here for the benchmark.
pub const GCRA_LUA: &str = r#"local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit = tonumber(ARGV[1]) + 1
local interval = tonumber(ARGV[3]) * 1000000 / tonumber(ARGV[2])
local tolerance = interval * limit
local increment = interval * tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + increment
local allow_at = new_tat - tolerance
if now < allow_at then
  return {1, limit, math.floor((tolerance - (tat - now)) / interval), math.ceil((allow_at - now) / 1000000), math.ceil((tat - now) / 1000000)}
end
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PXAT', string.format('%d', math.floor(new_tat / 1000)))
return {0, limit, math.floor((tolerance - (new_tat - now)) / interval), -1, math.ceil((new_tat - now) / 1000000)}"#;

/// A set of GCRA policies all or nothing, as a Lua script on the server's TIME: KEYS are the
/// policies' keys, ARGV their max_burst, count per period and period, three per key, then the
/// cost. Every policy decides before anything is written; one refusal writes nothing. Written
/// here for the benchmark, with the arithmetic of `GCRA_LUA`.
pub const GCRA_UNION_LUA: &str = r#"local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local cost = tonumber(ARGV[#KEYS * 3 + 1])
local tats, limited, reply = {}, 0, {}
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[i * 3 - 2]) + 1
  local interval = tonumber(ARGV[i * 3]) * 1000000 / tonumber(ARGV[i * 3 - 1])
  local tolerance = interval * limit
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  local new_tat = tat + interval * cost
  if now < new_tat - tolerance then
    limited = 1
    reply[i] = {1, limit, math.floor((tolerance - (tat - now)) / interval), math.ceil((new_tat - tolerance - now) / 1000000), math.ceil((tat - now) / 1000000)}
  else
    tats[i] = new_tat
    reply[i] = {0, limit, math.floor((tolerance - (new_tat - now)) / interval), -1, math.ceil((new_tat - now) / 1000000)}
  end
end
if limited == 0 then
  for i, key in ipairs(KEYS) do
    redis.call('SET', key, string.format('%d', tats[i]), 'PXAT', string.format('%d', math.floor(tats[i] / 1000)))
  end
end
return {limited, reply}"#;

/// The limiter libraries' script (rate-limiter-flexible, rate-limit-redis): count, arm the
/// window on the first hit, and return the count and the window's PTTL for the client to do
/// the rest.
pub const INCR_PTTL_LUA: &str = r#"local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}"#;

/// The policies of a set, in order: 10 a second, 100 a minute, 1,000 an hour, 10,000 a day
/// (bursts as large, so that the benchmark measures the allowed path).
const POLICIES: [[&str; 3]; 4] = [
    ["100", "10", "1"],
    ["1000", "100", "60"],
    ["10000", "1000", "3600"],
    ["100000", "10000", "86400"],
];

/// A set's keys, under one hash tag.
fn policy_keys(counter: &str) -> [String; 4] {
    ["sec", "min", "hour", "day"].map(|period| format!("{{{counter}}}:{period}"))
}

/// What every connection shares: the scripts' digests and the clock for `now`.
pub struct Shared {
    pub gcra_sha: String,
    pub gcra_union_sha: String,
    pub incr_pttl_sha: String,
    pub increx_limiter_sha: String,
    pub increx_sha: String,
    pub zwindow_sha: String,
    pub clock: AtomicU64,
    /// The window of `ZwindowServerClock`, in milliseconds of the server's clock.
    pub server_clock_window_ms: AtomicU64,
}

impl Shared {
    /// Sizes the server-clock window after a client-time ZWINDOW run at `ops_per_sec`, so
    /// that both runs keep about as many members per key (ten), and each call evicts about
    /// one: a comparison of the clocks, not of set sizes.
    pub fn size_server_clock_window(&self, ops_per_sec: f64) {
        let per_key_per_ms = ops_per_sec / WINDOW_KEYS as f64 / 1000.0;
        let members = WINDOW_TICKS / WINDOW_KEYS;
        let ms = (members as f64 / per_key_per_ms.max(1e-9)).round().max(1.0);
        self.server_clock_window_ms
            .store(ms as u64, Ordering::Relaxed);
    }
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
            Workload::Gcra => encode(&["GOBLIN.GCRA", &counter, "100", "10", "1"], out),
            Workload::GcraNative => encode(&["GCRA", &counter, "100", "10", "1"], out),
            Workload::Mgcra1 | Workload::Mgcra2 | Workload::Mgcra4 => {
                let n = match workload {
                    Workload::Mgcra1 => 1,
                    Workload::Mgcra2 => 2,
                    _ => 4,
                };
                let keys = policy_keys(&counter);
                let mut call = vec!["GOBLIN.MGCRA".to_string(), n.to_string()];
                for (key, limits) in keys.iter().zip(POLICIES).take(n) {
                    call.push(key.clone());
                    call.extend(limits.iter().map(|w| w.to_string()));
                }
                encode(&call, out);
            }
            Workload::Gcra4Pipelined => {
                for (key, limits) in policy_keys(&counter).iter().zip(POLICIES) {
                    encode(&["GOBLIN.GCRA", key, limits[0], limits[1], limits[2]], out);
                }
                return 4;
            }
            Workload::GcraUnion4Evalsha => {
                let keys = policy_keys(&counter);
                let mut call = vec![
                    "EVALSHA".to_string(),
                    self.shared.gcra_union_sha.clone(),
                    "4".to_string(),
                ];
                call.extend(keys.iter().cloned());
                for limits in POLICIES {
                    call.extend(limits.iter().map(|w| w.to_string()));
                }
                call.push("1".into());
                encode(&call, out);
            }
            Workload::GcraEvalsha => encode(
                &[
                    "EVALSHA",
                    &self.shared.gcra_sha,
                    "1",
                    &counter,
                    "100",
                    "10",
                    "1",
                    "1",
                ],
                out,
            ),
            Workload::IncrPttlEvalsha => encode(
                &[
                    "EVALSHA",
                    &self.shared.incr_pttl_sha,
                    "1",
                    &counter,
                    "60000",
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
            Workload::ZwindowServerClock => {
                let ms = self.shared.server_clock_window_ms.load(Ordering::Relaxed);
                let seconds = format!("{}.{:03}", ms / 1000, ms % 1000);
                encode(
                    &[
                        "GOBLIN.ZWINDOW",
                        &window,
                        "*",
                        &seconds,
                        WINDOW_LIMIT,
                        &member,
                    ],
                    out,
                )
            }
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
