//! GOBLIN.FWINDOW and GOBLIN.MFWINDOW against the scripts Node's rate limiters run, side by side
//! on the same server, call for call, on generated sequences (each pair in one MULTI, so both
//! see the same instant): the same counts, the same replies and the same expiries. The scripts
//! are written here from each library's documented behaviour: @fastify/rate-limit's
//! (`continueExceeding`, `exponentialBackoff`), rate-limiter-flexible's consume with its
//! `blockDuration` (whose block is a second round trip there, one script here), and
//! rate-limit-redis's (express-rate-limit). Then what replicas, the AOF and keyspace events
//! see, and a window's end: half-open on the server's clock, a key that expires in the call's
//! millisecond being a window that has ended (docs/commands/goblin.fwindow.md). rate-limit-redis
//! decides so too; the fastify and rate-limiter-flexible scripts count such a call in the window
//! that ended, and those calls are recognised (`Ends`), counted and kept rare.

mod common;
use common::*;

/// @fastify/rate-limit's counter: INCR; the first hit, or one above the limit with RESTART,
/// re-arms the whole window; one above it with BACKOFF the window doubled per extra hit, at
/// most 2^53 - 1 ms; otherwise the TTL as it stands. ARGV: window, max, restart (0/1), backoff
/// (0/1).
const FASTIFY_LIKE: &str = r#"
local count = redis.call('INCR', KEYS[1])
local window = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
if count == 1 or (ARGV[3] == '1' and count > max) then
  redis.call('PEXPIRE', KEYS[1], window)
  return {count, window}
elseif ARGV[4] == '1' and count > max then
  local ms = math.min(window * 2 ^ (count - max - 1), 2 ^ 53 - 1)
  redis.call('PEXPIRE', KEYS[1], ms)
  return {count, ms}
end
return {count, redis.call('PTTL', KEYS[1])}
"#;

/// rate-limiter-flexible's consume: a window of ARGV[1] ms armed when the key is created (or
/// has none), INCRBY ARGV[2]; then, when ARGV[4] (block ms) is positive and this call crossed
/// ARGV[3] (the limit), the key re-set with the block as its TTL.
const FLEXIBLE_LIKE: &str = r#"
redis.call('SET', KEYS[1], 0, 'PX', ARGV[1], 'NX')
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
local limit, block = tonumber(ARGV[3]), tonumber(ARGV[4])
if block > 0 and count > limit and count - tonumber(ARGV[2]) <= limit then
  redis.call('SET', KEYS[1], count, 'PX', block)
  ttl = block
end
return {count, ttl}
"#;

/// rate-limit-redis's increment: a key without a TTL, or none at all, or one in the last
/// millisecond of its window (PTTL 0), starts a window at 1; otherwise INCR, and the TTL as it
/// stands.
const EXPRESS_LIKE: &str = r#"
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then
  redis.call('SET', KEYS[1], 1, 'PX', ARGV[1])
  return {1, tonumber(ARGV[1])}
end
return {redis.call('INCR', KEYS[1]), ttl}
"#;

/// Several windows, all or nothing: ARGV is n, then window and limit per key. A key that
/// expires in this millisecond (PTTL 0) is a window that has ended, and counts as none. Refused
/// when any count would pass its limit (nothing written); otherwise each key counted (an ended
/// one deleted first), its window armed if new. Replies [refused, count and TTL per key], as
/// they stand when refused.
const UNION_LIKE: &str = r#"
local n = tonumber(ARGV[1])
local refused = 0
local ended = {}
for i, key in ipairs(KEYS) do
  ended[i] = redis.call('PTTL', key) == 0
  local count = ended[i] and 0 or tonumber(redis.call('GET', key) or '0')
  if count + n > tonumber(ARGV[2 * i + 1]) then refused = 1 end
end
local reply = {refused}
for i, key in ipairs(KEYS) do
  if refused == 0 then
    if ended[i] then redis.call('DEL', key) end
    local count = redis.call('INCRBY', key, n)
    if redis.call('PTTL', key) == -1 then redis.call('PEXPIRE', key, ARGV[2 * i]) end
  end
  if refused == 1 and ended[i] then
    reply[#reply + 1] = {0, -2}
  else
    reply[#reply + 1] = {tonumber(redis.call('GET', key) or '0'), redis.call('PTTL', key)}
  end
end
return reply
"#;

/// The module's keys' expiries as each step left them, to recognise a step in the millisecond
/// one of them expired (`met_the_end`).
struct Ends(std::collections::HashMap<String, i64>);

impl Ends {
    fn new() -> Self {
        Ends(std::collections::HashMap::new())
    }

    /// After a step (`step.replies`: the script's reply, the module's, then GET and PEXPIRETIME
    /// of both keys), the module's key's expiry.
    fn record(&mut self, key: &str, step: &Step) {
        self.0.insert(key.to_string(), step.replies[5].int());
    }

    /// Whether the step met the millisecond the module's key expired, where the script counted
    /// the call in the window that ended (its INCR finds the key the server still holds) and
    /// the module started a new window from `by`: armed at that very millisecond, as the new
    /// expiry less the reply's TTL says.
    fn met_the_end(&self, key: &str, step: &Step, by: i64) -> bool {
        let r = &step.replies;
        let (idiom, goblin) = (r[0].array(), r[1].array());
        self.0.get(key).is_some_and(|&end| {
            end > 0
                && goblin[0].int() == by
                && idiom[0] != goblin[0]
                && r[5].int() - goblin[1].int() == end
                && r[3] == bulk(&by.to_string())
        })
    }
}

/// After a pair of calls: the same count, what each key holds and when it expires, and the
/// reply's TTL. Where the server has a command-time snapshot (Redis 7.2+, Valkey), the very same
/// milliseconds. Redis 7.0 reads the wall clock at each command: the module's call, after the
/// script's, may arm its key later by no more than the step that armed it took, and each TTL is
/// read at some instant of this step.
struct Same {
    snapshot: bool,
    /// Per key: the last (script, module) expiries, and how long the step that armed them took.
    armed: std::collections::HashMap<String, ((i64, i64), i64)>,
    /// Steps that met the instant between the two keys' expiries (`straddled`).
    straddles: usize,
}

impl Same {
    fn new(flavor: Flavor) -> Self {
        Same {
            snapshot: flavor.has_command_time_snapshot(),
            armed: std::collections::HashMap::new(),
            straddles: 0,
        }
    }

    /// Whether this step met the instant between the two keys' expiries on a server that reads
    /// its clock at each command (Redis 7.0): the module's key, armed by a call after the
    /// script's, may expire up to that step's length later, and a call in between finds the
    /// script's key gone and the module's still there, as any two calls that far apart would.
    /// Keys that expire in the same millisecond can be met apart too: Redis 7.0 looks a key up
    /// inside a script at the script's start, and inside MULTI at EXEC's, which came before it.
    fn straddled(&self, key: &str, step: &Step) -> bool {
        !self.snapshot
            && self
                .armed
                .get(key)
                .is_some_and(|((idiom_at, goblin_at), _)| {
                    idiom_at <= goblin_at
                        && *idiom_at <= step.after_ms
                        && *goblin_at >= step.before_ms
                })
    }

    /// Whether the two keys may be compared from here on: `false` after a step that straddled
    /// their expiries (`straddled`) and found them apart, whose keys the caller deletes, so that
    /// both start afresh. Such steps stay rare (`assert_rare`).
    fn comparable(&mut self, key: &str, step: &Step) -> bool {
        let r = &step.replies;
        let apart = r[0].array()[0] != r[1].array()[0] || r[2] != r[3];
        if apart && self.straddled(key, step) {
            self.straddles += 1;
            self.armed.remove(key);
            return false;
        }
        true
    }

    /// At most one step in 20 straddled the two keys' expiries.
    fn assert_rare(&self, steps: usize) {
        assert!(
            self.straddles * 20 <= steps,
            "{} of {steps} steps between the two keys' expiries",
            self.straddles
        );
    }

    /// `step.replies`: the script's reply, the module's, then GET and PEXPIRETIME of both keys.
    fn check(&mut self, key: &str, step: &Step, n: usize) {
        let r = &step.replies;
        let (idiom, goblin) = (r[0].array(), r[1].array());
        let armed = self.armed.get(key);
        assert_eq!(
            goblin[0], idiom[0],
            "step {n}: the count (expiries, slack: {armed:?}; step {} to {})",
            step.before_ms, step.after_ms
        );
        assert_eq!(r[2], r[3], "step {n}: the values");
        let (idiom_at, goblin_at) = (r[4].int(), r[5].int());
        let (idiom_ttl, goblin_ttl) = (idiom[1].int(), goblin[1].int());
        if self.snapshot || idiom_at < 0 || goblin_at < 0 {
            assert_eq!(goblin_at, idiom_at, "step {n}: the expiries");
            if self.snapshot {
                assert_eq!(goblin_ttl, idiom_ttl, "step {n}: the TTL");
            } else {
                assert_eq!(goblin_ttl < 0, idiom_ttl < 0, "step {n}: a TTL or none");
            }
            return;
        }
        let slack = match self.armed.get(key) {
            Some((last, slack)) if *last == (idiom_at, goblin_at) => *slack,
            _ => step.after_ms - step.before_ms,
        };
        self.armed
            .insert(key.to_string(), ((idiom_at, goblin_at), slack));
        let offset = goblin_at - idiom_at;
        assert!(
            (0..=slack).contains(&offset),
            "step {n}: {goblin_at} against {idiom_at}"
        );
        let now_slack = step.after_ms - step.before_ms;
        assert!(
            (offset - now_slack..=offset + now_slack).contains(&(goblin_ttl - idiom_ttl)),
            "step {n}: TTL {goblin_ttl} against {idiom_ttl}, expiries {offset} ms apart"
        );
    }
}

/// How far apart the test's calls come on the server's clock, its own pauses left out. Windows
/// and pauses are sized in its `unit`, so that on a loaded machine, where calls come slower, a
/// window still spans as many calls (calls over the limit) and a pause still outlives windows
/// (windows that run out) as on a quiet one, where the unit is 20 ms.
struct Pace {
    last_ms: Option<i64>,
    paused_ms: i64,
    recent: std::collections::VecDeque<i64>,
}

impl Pace {
    /// Calls a window spans per unit: on a quiet machine a call comes every millisecond or so.
    const CALLS_PER_UNIT: i64 = 20;
    const LEAST_UNIT_MS: i64 = 20;

    fn new() -> Self {
        Pace {
            last_ms: None,
            paused_ms: 0,
            recent: std::collections::VecDeque::new(),
        }
    }

    /// The unit windows and pauses are counted in, in milliseconds: 20 calls at the recent
    /// pace (the mean of the last 16 gaps), and at least 20 ms.
    fn unit(&self) -> u64 {
        let total: i64 = self.recent.iter().sum();
        let calls = self.recent.len().max(1) as i64;
        (total * Self::CALLS_PER_UNIT / calls).max(Self::LEAST_UNIT_MS) as u64
    }

    /// A call the server's clock read at `at_ms` (a step's `before_ms`).
    fn called(&mut self, at_ms: i64) {
        if let Some(last) = self.last_ms {
            self.recent
                .push_back((at_ms - last - self.paused_ms).max(0));
            if self.recent.len() > 16 {
                self.recent.pop_front();
            }
        }
        self.last_ms = Some(at_ms);
        self.paused_ms = 0;
    }

    /// A pause of `ms` between calls, which the pace leaves out.
    fn pause(&mut self, ms: u64) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
        self.paused_ms += ms as i64;
    }
}

/// The reads after each pair: the value and the absolute expiry, of both keys.
const READS: &[&[&str]] = &[&["GET"], &["PEXPIRETIME"]];

fn eval(sha: &str, key: &str, args: &[String]) -> Vec<String> {
    let mut command = vec!["EVALSHA".into(), sha.into(), "1".into(), key.into()];
    command.extend(args.iter().cloned());
    command
}

fn fwindow(key: &str, args: &[String]) -> Vec<String> {
    let mut command = vec!["GOBLIN.FWINDOW".to_string(), key.into()];
    command.extend(args.iter().cloned());
    command
}

on_every_server! {
    /// @fastify/rate-limit's three modes, each with windows short enough to run out now and
    /// then (a pause between calls), and limits low enough to pass, sized in the test's pace
    /// (`Pace`).
    fn fwindow_matches_the_fastify_script_call_for_call(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let sha = c.call(&["SCRIPT", "LOAD", FASTIFY_LIKE]).text();
        let mut same = Same::new(flavor);
        let mut rng = Rng::new(0x0fa5_71f7);
        let mut over = 0;
        let (mut ends, mut at_the_end) = (Ends::new(), 0);
        let mut pace = Pace::new();
        for n in 0..900 {
            let k = rng.below(3);
            let unit = pace.unit();
            let window = *rng.pick(&[2 * unit, 4 * unit, 15 * unit / 2]);
            let max = 1 + rng.below(4);
            let mode = rng.below(3);
            let (idiom_key, goblin_key) = (format!("fastify:{k}:{mode}"), format!("goblin:{k}:{mode}"));
            let idiom = eval(&sha, &idiom_key, &[window.to_string(), max.to_string(), u8::from(mode == 1).to_string(), u8::from(mode == 2).to_string()]);
            let mut goblin = vec![window.to_string(), "LIMIT".into(), max.to_string()];
            match mode {
                1 => goblin.push("RESTART".into()),
                2 => goblin.push("BACKOFF".into()),
                _ => {}
            }
            let step = side_by_side(&mut c, idiom, fwindow(&goblin_key, &goblin), READS, &idiom_key, &goblin_key);
            pace.called(step.before_ms);
            if ends.met_the_end(&goblin_key, &step, 1) {
                at_the_end += 1;
                c.call(&["DEL", &idiom_key, &goblin_key]);
                same.armed.remove(&goblin_key);
                continue;
            }
            ends.record(&goblin_key, &step);
            if !same.comparable(&goblin_key, &step) {
                c.call(&["DEL", &idiom_key, &goblin_key]);
                continue;
            }
            same.check(&goblin_key, &step, n);
            over += usize::from(step.replies[1].array()[0].int() > max as i64);
            if rng.below(8) == 0 {
                pace.pause(rng.below(3 * unit));
            }
        }
        assert!(over > 100, "calls above the limit: {over}");
        eprintln!("{}: {at_the_end} steps in the millisecond a window ended", flavor.label());
        assert!(at_the_end < 20, "{at_the_end} steps in the millisecond a window ended");
        same.assert_rare(900);
    }

    /// rate-limiter-flexible's consume, its penalties and rewards (negative points), and its
    /// block on crossing the limit.
    fn fwindow_matches_the_rate_limiter_flexible_script_call_for_call(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let sha = c.call(&["SCRIPT", "LOAD", FLEXIBLE_LIKE]).text();
        let mut same = Same::new(flavor);
        let mut rng = Rng::new(0xf1e7_1b1e);
        let mut blocked = 0;
        let (mut ends, mut at_the_end) = (Ends::new(), 0);
        let mut pace = Pace::new();
        for n in 0..900 {
            let k = rng.below(3);
            let unit = pace.unit();
            let window = *rng.pick(&[5 * unit / 2, 5 * unit, 10 * unit]);
            let points = *rng.pick(&[1i64, 1, 2, 3, -1]);
            let limit = 2 + rng.below(4);
            let block = *rng.pick(&[0, 0, 6 * unit, 15 * unit]);
            let (idiom_key, goblin_key) = (format!("rlflx:{k}"), format!("goblin:{k}"));
            let idiom = eval(&sha, &idiom_key, &[window.to_string(), points.to_string(), limit.to_string(), block.to_string()]);
            let mut goblin = vec![window.to_string(), "BY".into(), points.to_string()];
            if block > 0 {
                goblin.extend(["LIMIT".to_string(), limit.to_string(), "BLOCK".into(), block.to_string()]);
            }
            let step = side_by_side(&mut c, idiom, fwindow(&goblin_key, &goblin), READS, &idiom_key, &goblin_key);
            pace.called(step.before_ms);
            if ends.met_the_end(&goblin_key, &step, points) {
                at_the_end += 1;
                c.call(&["DEL", &idiom_key, &goblin_key]);
                same.armed.remove(&goblin_key);
                continue;
            }
            ends.record(&goblin_key, &step);
            if !same.comparable(&goblin_key, &step) {
                c.call(&["DEL", &idiom_key, &goblin_key]);
                continue;
            }
            same.check(&goblin_key, &step, n);
            blocked += usize::from(block > 0 && step.replies[1].array()[1].int() == block as i64);
            if rng.below(8) == 0 {
                pace.pause(rng.below(4 * unit));
            }
        }
        assert!(blocked > 20, "blocks: {blocked}");
        eprintln!("{}: {at_the_end} steps in the millisecond a window ended", flavor.label());
        assert!(at_the_end < 20, "{at_the_end} steps in the millisecond a window ended");
        same.assert_rare(900);
    }

    /// rate-limit-redis's increment, beside the plain call: both take a key that expires in the
    /// call's millisecond (PTTL 0), which the server still holds, as a window that has ended,
    /// and start a new one (docs/commands/goblin.fwindow.md), so no step differs there.
    fn fwindow_matches_the_rate_limit_redis_script_call_for_call(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let sha = c.call(&["SCRIPT", "LOAD", EXPRESS_LIKE]).text();
        let mut same = Same::new(flavor);
        let mut rng = Rng::new(0xe8b1e55);
        let mut pace = Pace::new();
        for n in 0..600 {
            let k = rng.below(3);
            let unit = pace.unit();
            let window = *rng.pick(&[3 * unit / 2, 3 * unit, 6 * unit]);
            let (idiom_key, goblin_key) = (format!("rl:{k}"), format!("goblin:{k}"));
            let step = side_by_side(&mut c, eval(&sha, &idiom_key, &[window.to_string()]), fwindow(&goblin_key, &[window.to_string()]), READS, &idiom_key, &goblin_key);
            pace.called(step.before_ms);
            if !same.comparable(&goblin_key, &step) {
                c.call(&["DEL", &idiom_key, &goblin_key]);
                continue;
            }
            same.check(&goblin_key, &step, n);
            if rng.below(6) == 0 {
                pace.pause(rng.below(5 * unit / 2));
            }
        }
        same.assert_rare(600);
    }

    /// GOBLIN.MFWINDOW against an all-or-nothing script over the same windows.
    fn mfwindow_matches_an_all_or_nothing_script_call_for_call(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let sha = c.call(&["SCRIPT", "LOAD", UNION_LIKE]).text();
        let mut rng = Rng::new(0x000a_110e);
        let (mut allowed, mut refused) = (0, 0);
        let mut pace = Pace::new();
        // Redis 7.0 reads its clock at each command: there a step is compared only where the
        // script and the module met the same millisecond (the whole step within one), and after
        // any other the module's keys are made the script's. Steps go on until 600 are compared,
        // more than 100 of them allowed and more than 100 refused: which steps fall within one
        // millisecond depends on the machine's load, and so does the mix among them.
        let snapshot = flavor.has_command_time_snapshot();
        let mut realigned = 0;
        for n in 0..4800 {
            if allowed + refused >= 600 && allowed > 100 && refused > 100 {
                break;
            }
            let by = *rng.pick(&[1i64, 1, 2]);
            let unit = pace.unit();
            let windows = [(3 * unit, 2 + rng.below(3)), (15 * unit / 2, 4 + rng.below(4))];
            let mut idiom = vec!["EVALSHA".to_string(), sha.clone(), "2".into(), "{i}:a".into(), "{i}:b".into(), by.to_string()];
            let mut goblin = vec!["GOBLIN.MFWINDOW".to_string(), "2".into()];
            for ((window, limit), name) in windows.iter().zip(["a", "b"]) {
                idiom.extend([window.to_string(), limit.to_string()]);
                goblin.extend([format!("{{g}}:{name}"), window.to_string(), limit.to_string()]);
            }
            goblin.extend(["BY".to_string(), by.to_string()]);
            let mut commands = vec![vec!["TIME".to_string()], vec!["MULTI".to_string()], idiom, goblin];
            for key in ["{i}:a", "{g}:a", "{i}:b", "{g}:b"] {
                commands.push(vec!["GET".into(), key.into()]);
            }
            commands.push(vec!["EXEC".into()]);
            commands.push(vec!["TIME".into()]);
            let replies = c.pipeline(&commands);
            pace.called(time_ms(&replies[0]));
            let exec = replies[replies.len() - 2].array().to_vec();
            if !snapshot && time_ms(&replies[0]) != time_ms(&replies[replies.len() - 1]) {
                for name in ["a", "b"] {
                    let (from, to) = (format!("{{i}}:{name}"), format!("{{g}}:{name}"));
                    if c.call(&["COPY", &from, &to, "REPLACE"]) == Reply::Int(0) {
                        c.call(&["DEL", &to]);
                    }
                }
                realigned += 1;
                continue;
            }
            let (idiom, goblin) = (exec[0].array(), exec[1].array());
            assert_eq!(goblin[0], idiom[0], "step {n}: refused or not");
            for (i, pair) in goblin[2..].iter().enumerate() {
                assert_eq!(pair.array()[0], idiom[1 + i].array()[0], "step {n}: window {i}'s count");
            }
            assert_eq!(exec[2], exec[3], "step {n}: a's value");
            assert_eq!(exec[4], exec[5], "step {n}: b's value");
            if goblin[0] == Reply::Int(1) { refused += 1 } else { allowed += 1 }
            if rng.below(5) == 0 {
                pace.pause(rng.below(7 * unit / 2));
            }
        }
        assert!(allowed + refused >= 600, "{} compared, with {realigned} steps realigned", allowed + refused);
        assert!(allowed > 100 && refused > 100, "{allowed} allowed, {refused} refused");
    }

    /// What the windows leave on a replica without the module and in the AOF, restarted without
    /// it: the same keys, values and expiries.
    fn replicas_and_the_aof_get_core_commands(flavor: Flavor) {
        let pair = PersistedPair::start(flavor, "fwindow");
        let mut c = pair.primary.conn();
        let calls: &[&[&str]] = &[
            &["GOBLIN.FWINDOW", "f:a", "100000"],
            &["GOBLIN.FWINDOW", "f:a", "100000", "BY", "3"],
            &["GOBLIN.FWINDOW", "f:a", "100000", "LIMIT", "2", "BLOCK", "300000"],
            &["GOBLIN.FWINDOW", "f:b", "100000", "LIMIT", "0", "BACKOFF"],
            &["GOBLIN.FWINDOW", "f:b", "100000", "LIMIT", "0", "RESTART"],
            &["GOBLIN.FWINDOW", "f:c", "0", "BY", "-2"],
            &["GOBLIN.MFWINDOW", "2", "{m}:1", "1000000", "10", "{m}:2", "2000000", "10", "BY", "4"],
            &["GOBLIN.MFWINDOW", "2", "{m}:1", "1000000", "10", "{m}:2", "2000000", "5", "BY", "4"],
        ];
        for call in calls {
            assert!(!c.call(call).is_error(), "{call:?}");
        }
        let (keys, aof) = pair.check("*");
        assert_eq!(keys.len(), 5, "{keys:?}");
        let commands = aof_commands(&aof);
        assert!(commands.iter().all(|command| !command[0].to_uppercase().starts_with("GOBLIN")));
        assert!(commands.iter().any(|command| command[0] == "INCRBY"), "{commands:?}");
    }

    /// A call in the millisecond a key expires, which the server still holds: its window has
    /// ended (docs/commands/goblin.fwindow.md). GOBLIN.FWINDOW drops the key as the server drops
    /// an expired one it meets (`expired`; `DEL`, or `UNLINK` under `lazyfree-lazy-expire`, to
    /// replicas and the AOF) and starts a new window from 0, with the events of a call on a
    /// missing key; a window of 0 starts a counter without one (`INCRBY` after the `DEL`);
    /// GOBLIN.MFWINDOW counts it anew; GOBLIN.FWSTATS reads it as missing. A replica without the
    /// module and a restart from the AOF without it end with the same keys.
    fn a_window_ends_in_the_millisecond_its_key_expires(flavor: Flavor) {
        let pair = PersistedPair::start(flavor, "fwindow-ends");
        let mut c = pair.primary.conn();
        c.call(&["CONFIG", "SET", "notify-keyspace-events", "KEAn"]);
        // Valkey's default is yes: each key below says which it ran under.
        c.call(&["CONFIG", "SET", "lazyfree-lazy-expire", "no"]);
        let ending = |c: &mut Conn, key: &str, call: &[&str]| {
            let setup = vec![["SET", key, "4", "PX", "2"].map(String::from).to_vec()];
            let call: Vec<String> = call.iter().map(|word| word.to_string()).collect();
            call_as_it_ends(c, &setup, &call, key).reply
        };
        let ints = |ns: &[i64]| Reply::Array(ns.iter().map(|n| Reply::Int(*n)).collect());
        let events = keyspace_events(&pair.primary, &mut c, |c| {
            assert_eq!(ending(c, "e:a", &["GOBLIN.FWINDOW", "e:a", "100000", "BY", "2"]), ints(&[2, 100_000]));
        });
        let setup = events.iter().rposition(|event| event == "set e:a").expect("the setup's SET") - 1;
        assert_eq!(
            events[setup..],
            ["new e:a", "set e:a", "expire e:a", "expired e:a", "new e:a", "incrby e:a", "expire e:a"],
            "{events:?}"
        );
        assert_eq!(ending(&mut c, "e:b", &["GOBLIN.FWINDOW", "e:b", "0", "BY", "3"]), ints(&[3, -1]));
        assert_eq!(ending(&mut c, "e:c", &["GOBLIN.FWSTATS", "e:c"]), ints(&[0, -2]));
        let counted = ending(&mut c, "e:d", &["GOBLIN.MFWINDOW", "2", "e:d", "100000", "4", "e:e", "100000", "4"]);
        assert_eq!(counted, Reply::Array(vec![Reply::Int(0), Reply::Int(-1), ints(&[1, 100_000]), ints(&[1, 100_000])]));
        c.call(&["CONFIG", "SET", "lazyfree-lazy-expire", "yes"]);
        assert_eq!(ending(&mut c, "e:f", &["GOBLIN.FWINDOW", "e:f", "100000"]), ints(&[1, 100_000]));
        let (keys, aof) = pair.check("e:*");
        let names: Vec<&str> = keys.iter().map(|(key, _)| key.as_str()).collect();
        assert_eq!(names, ["e:a", "e:b", "e:d", "e:e", "e:f"], "{keys:?}");
        let commands = aof_commands(&aof);
        let last_two = |key: &str| -> Vec<String> {
            let on_key: Vec<&Vec<String>> = commands.iter().filter(|command| command.get(1).map(String::as_str) == Some(key)).collect();
            on_key[on_key.len() - 2..].iter().map(|command| command[..command.len().min(3)].join(" ")).collect()
        };
        assert_eq!(last_two("e:a"), ["DEL e:a", "SET e:a 2"]);
        assert_eq!(last_two("e:b"), ["DEL e:b", "INCRBY e:b 3"]);
        assert_eq!(last_two("e:d"), ["DEL e:d", "SET e:d 1"]);
        assert_eq!(last_two("e:f"), ["UNLINK e:f", "SET e:f 1"]);
        assert!(commands.iter().all(|command| !command[0].to_uppercase().starts_with("GOBLIN")));
    }

    /// The events GOBLIN.FWINDOW fires are the fastify script's: `new` and `incrby` for the
    /// first hit and `expire` as its window is armed; `incrby` alone after; `expire` again when
    /// a hit over the limit restarts the window.
    fn its_events_are_the_scripts(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let sha = c.call(&["SCRIPT", "LOAD", FASTIFY_LIKE]).text();
        c.call(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
        let run = |c: &mut Conn, key: &str, goblin: bool| {
            keyspace_events(&server, c, |c| {
                for _ in 0..3 {
                    let reply = if goblin {
                        c.call(&["GOBLIN.FWINDOW", key, "60000", "LIMIT", "1", "RESTART"])
                    } else {
                        c.call(&["EVALSHA", &sha, "1", key, "60000", "1", "1", "0"])
                    };
                    assert!(!reply.is_error(), "{reply:?}");
                }
            })
        };
        let idiom: Vec<String> = run(&mut c, "k:idiom", false).iter().map(|e| e.replace("k:idiom", "k")).collect();
        let goblin: Vec<String> = run(&mut c, "k:goblin", true).iter().map(|e| e.replace("k:goblin", "k")).collect();
        assert_eq!(goblin, idiom);
    }
}
