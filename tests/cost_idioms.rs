//! The commands with a cost against the Lua idioms they replace, the ones the `limits` library
//! runs, side by side on the same server, call for call: GOBLIN.INCREX with COST against
//! INCRBY + EXPIRE; GOBLIN.ZWINDOW with COST (and GOBLIN.ZWSTATS) against the list that holds a
//! copy of the timestamp per unit of cost; GOBLIN.SWINDOW against the sliding window counter on
//! two keys per window, aligned to the clock, and against its model in goblin-core.

mod common;
use common::*;
use goblin_core::swindow::{self, Stored};

/// The fixed window with a cost: INCRBY, and EXPIRE when the result is the cost.
const INCRBY_LUA: &str = r#"local current = redis.call("incrby", KEYS[1], ARGV[2])
if tonumber(current) == tonumber(ARGV[2]) then
  redis.call("expire", KEYS[1], ARGV[1])
end
return current"#;

/// The moving window with a cost: a list of timestamps, newest first, one copy per unit. A
/// request fits if the entry `limit - cost` places from the newest is older than the window
/// (an entry at exactly `now - expiry` is inside).
const LIST_LUA: &str = r#"local now, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local expiry, cost = tonumber(ARGV[3]), tonumber(ARGV[4])
if cost > limit then return 0 end
local entry = redis.call('lindex', KEYS[1], limit - cost)
if entry and tonumber(entry) >= now - expiry then return 0 end
for i = 1, cost do redis.call('lpush', KEYS[1], ARGV[1]) end
redis.call('ltrim', KEYS[1], 0, limit - 1)
redis.call('expire', KEYS[1], expiry)
return 1"#;

/// The list's window: the units at or after `now - expiry`, and the oldest of them.
const LIST_STATS_LUA: &str = r#"local from, limit = tonumber(ARGV[1]) - tonumber(ARGV[2]), tonumber(ARGV[3])
local items = redis.call('lrange', KEYS[1], 0, limit - 1)
local count, oldest = 0, false
for i = 1, #items do
  if tonumber(items[i]) >= from then count = count + 1; oldest = items[i] else break end
end
return {count, oldest}"#;

/// The sliding window counter on the server's clock (TIME, the command-time snapshot the
/// module reads too): a counter per window, aligned to the epoch, the previous one weighted by
/// its overlap. Replies as GOBLIN.SWINDOW does.
const COUNTER_LUA: &str = r#"local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- ARGV: the window in milliseconds, the limit, the cost.
local w, limit, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local start = math.floor(now / w) * w
local function ms(n) return string.format('%.0f', n) end
local current_key, previous_key = KEYS[1] .. ':' .. ms(start), KEYS[1] .. ':' .. ms(start - w)
local current = tonumber(redis.call('get', current_key) or '0')
local previous = tonumber(redis.call('get', previous_key) or '0')
local previous_ttl = 0
if previous > 0 then previous_ttl = start + w - now end
local current_ttl = start + 2 * w - now
if cost <= limit and math.floor(previous * previous_ttl / w) + current + cost <= limit then
  current = redis.call('incrby', current_key, cost)
  redis.call('pexpireat', current_key, ms(start + 2 * w))
  return {1, previous, previous_ttl, current, current_ttl}
end
return {0, previous, previous_ttl, current, current_ttl}"#;

/// `commands` inside one MULTI (so both sides see the same instant), with TIME before and
/// after: the EXEC reply's elements, and the two clocks in milliseconds.
fn in_one_transaction(c: &mut Conn, commands: Vec<Vec<String>>) -> (Vec<Reply>, i64, i64) {
    let mut wire = vec![vec!["TIME".to_string()], vec!["MULTI".to_string()]];
    wire.extend(commands);
    wire.push(vec!["EXEC".into()]);
    wire.push(vec!["TIME".into()]);
    let replies = c.pipeline(&wire);
    let exec = replies[replies.len() - 2].array().to_vec();
    (
        exec,
        time_ms(&replies[0]),
        time_ms(&replies[replies.len() - 1]),
    )
}

fn words(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

on_every_server! {
    fn increx_with_a_cost_matches_the_incrby_idiom(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let sha = c.call(&["SCRIPT", "LOAD", INCRBY_LUA]).text();
        let mut rng = Rng::new(0xc057_2026);
        let seconds = ["30", "60", "3600", "0", "-1"];
        let mut first_hits = 0;
        // Per key, how far apart the two clocks may be: the TIME interval of the transaction
        // that last armed its expiry (on Redis 7.0, where each command reads the wall clock).
        let mut slack = [0i64; 6];
        for step in 0..2000 {
            let k = rng.below(6);
            let (lua, native) = (format!("lua:{k}"), format!("native:{k}"));
            if rng.below(12) == 0 {
                // The same outside write on both: a reset, a zero, a counter without a TTL.
                let value = rng.pick(&["0", "7", "-3"]).to_string();
                for key in [&lua, &native] {
                    c.call(&["SET", key, &value]);
                }
            }
            let (secs, cost) = (rng.pick(&seconds).to_string(), (1 + rng.below(100)).to_string());
            let (r, before, after) = in_one_transaction(
                &mut c,
                vec![
                    words(&["EVALSHA", &sha, "1", &lua, &secs, &cost]),
                    words(&["GOBLIN.INCREX", &native, &secs, "COST", &cost]),
                    words(&["GET", &lua]),
                    words(&["GET", &native]),
                    words(&["PEXPIRETIME", &lua]),
                    words(&["PEXPIRETIME", &native]),
                ],
            );
            assert_eq!(r[1], r[0], "step {step}: the replies");
            assert_eq!(r[3], r[2], "step {step}: the values");
            let first_hit = r[1] == Reply::Int(cost.parse().unwrap());
            if first_hit {
                slack[k as usize] = after - before;
            }
            let (lua_at, native_at) = (r[4].int(), r[5].int());
            if flavor.has_command_time_snapshot() || lua_at < 0 {
                assert_eq!(native_at, lua_at, "step {step}: the expiries");
            } else {
                // Redis 7.0 reads the wall clock at each command: the module's is the later,
                // within the transaction that armed both.
                let slack = slack[k as usize];
                assert!(
                    (lua_at..=lua_at + slack).contains(&native_at),
                    "step {step}: Lua's expiry {lua_at}, the module's {native_at}, {slack} ms apart at most"
                );
            }
            first_hits += usize::from(first_hit);
        }
        assert!(first_hits > 100, "only {first_hits} first hits");
    }
}

on_every_server! {
    fn zwindow_with_a_cost_matches_the_list_idiom(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let sha = c.call(&["SCRIPT", "LOAD", LIST_LUA]).text();
        let stats_sha = c.call(&["SCRIPT", "LOAD", LIST_STATS_LUA]).text();
        let mut rng = Rng::new(0x11c7_2026);
        let mut clocks = [1_000_000_000u64; 3]; // per key, the caller's clock in milliseconds
        // One limit and one window per key, as a limiter's key names its limit.
        let (limits, expiries) = ([3u64, 10, 20], [1u64, 2, 5]);
        let (mut admitted, mut refused) = (0, 0);
        for step in 0..2500 {
            let k = rng.below(3) as usize;
            let (expiry, limit) = (expiries[k], limits[k]);
            // Steps of 0 to 0.6 windows, now and then exactly a window (the boundary).
            clocks[k] += if rng.below(8) == 0 { expiry * 1000 } else { rng.below(expiry * 600) };
            let now = format!("{}.{:03}", clocks[k] / 1000, clocks[k] % 1000);
            let cost = 1 + rng.below(limit + 2);
            let (lua, native) = (format!("lua:{k}"), format!("native:{k}"));
            // The storage's boundary: half a millisecond past the window keeps an entry at
            // exactly now - expiry inside, as the list does.
            let window = format!("{expiry}.0005");
            let (limit, cost, expiry) = (limit.to_string(), cost.to_string(), expiry.to_string());
            let (r, _, _) = in_one_transaction(
                &mut c,
                vec![
                    words(&["EVALSHA", &sha, "1", &lua, &now, &limit, &expiry, &cost]),
                    words(&["GOBLIN.ZWINDOW", &native, &now, &window, &limit, "", "COST", &cost]),
                    words(&["EVALSHA", &stats_sha, "1", &lua, &now, &expiry, &limit]),
                    words(&["GOBLIN.ZWSTATS", &native, &now, &window]),
                ],
            );
            assert_eq!(r[1], r[0], "step {step}: the decisions at {now}");
            let (lua_stats, native_stats) = (r[2].array(), r[3].array());
            assert_eq!(native_stats[0], lua_stats[0], "step {step}: the units in the window");
            match (&lua_stats[1], &native_stats[1]) {
                (Reply::Nil, Reply::Nil) => {}
                // The entries go in one unit in the last place apart when they share a
                // millisecond: the oldest is the same millisecond, to well under a microsecond.
                (lua_oldest, native_oldest) => {
                    let (a, b): (f64, f64) = (lua_oldest.text().parse().unwrap(), native_oldest.text().parse().unwrap());
                    assert!((a - b).abs() < 1e-6, "step {step}: the oldest entry {a} against {b}");
                }
            }
            if r[1] == Reply::Int(1) { admitted += 1 } else { refused += 1 }
        }
        assert!(admitted > 500 && refused > 500, "admitted {admitted}, refused {refused}");
        // One member per request, whatever its cost; the list holds a copy per unit.
        let members: i64 = (0..3).map(|k| c.call(&["ZCARD", &format!("native:{k}")]).int()).sum();
        let copies: i64 = (0..3).map(|k| c.call(&["LLEN", &format!("lua:{k}")]).int()).sum();
        assert!(members <= copies, "{members} members, {copies} copies");
    }
}

on_every_server! {
    /// On every server: each reply is what goblin-core's model says for the key as it stood,
    /// at one of the milliseconds the call may have run at; on the servers with a command-time
    /// snapshot, also exactly the aligned counter written in Lua, in the same transaction.
    fn swindow_matches_its_model_and_the_aligned_counter(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let sha = c.call(&["SCRIPT", "LOAD", COUNTER_LUA]).text();
        let mut rng = Rng::new(0x5c0a_2026);
        let (window_ms, window) = (300, "0.3");
        let (mut admitted, mut refused, mut weighed) = (0, 0, 0);
        for step in 0..600 {
            if rng.below(3) == 0 {
                std::thread::sleep(std::time::Duration::from_millis(rng.below(250)));
            }
            let limit = 1 + rng.below(12);
            let cost = 1 + rng.below(limit + 1);
            let (limit_text, cost_text) = (limit.to_string(), cost.to_string());
            let stored = match c.call(&["GET", "native"]) {
                Reply::Bulk(bytes) => Some(Stored::parse(&bytes).expect("a window counter")),
                _ => None,
            };
            let (r, before, after) = in_one_transaction(
                &mut c,
                vec![
                    words(&["EVALSHA", &sha, "1", "lua", &window_ms.to_string(), &limit_text, &cost_text]),
                    words(&["GOBLIN.SWINDOW", "native", window, &limit_text, "COST", &cost_text]),
                    words(&["PEXPIRETIME", "native"]),
                ],
            );
            let native: Vec<i64> = r[1].array().iter().map(Reply::int).collect();
            let model_at = |now_ms: i64| -> Vec<i64> {
                let view = swindow::view(stored, window_ms, now_ms).unwrap();
                let (limit, cost) = (limit as i64, cost as i64);
                let (admitted, view) = match view.admits(cost, limit).then(|| view.record(cost)).flatten() {
                    Some((stored, _)) => (1, view.with(stored)),
                    None => (0, view),
                };
                vec![admitted, view.previous, view.previous_ttl_ms, view.current, view.current_ttl_ms]
            };
            assert!(
                (before..=after).any(|ms| model_at(ms) == native),
                "step {step}: {native:?} is the model at no time in [{before}, {after}]"
            );
            if flavor.has_command_time_snapshot() {
                let lua: Vec<i64> = r[0].array().iter().map(Reply::int).collect();
                assert_eq!(native, lua, "step {step}: against the aligned counter");
            }
            if native[0] == 1 {
                admitted += 1;
                // The key lives as long as the current count: two windows from its start.
                let at = r[2].int();
                assert!((before..=after).any(|ms| ms + native[4] == at), "step {step}: expires at {at}");
            } else {
                refused += 1;
            }
            weighed += usize::from(native[1] > 0);
        }
        assert!(admitted > 100 && refused > 100 && weighed > 100, "admitted {admitted}, refused {refused}, with a previous window {weighed}");
    }
}
