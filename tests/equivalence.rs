//! The native commands against the documented Lua idioms, side by side on the same server, call for
//! call, on generated sequences; and ZWINDOW's lease semantics against a tiny model.

mod common;
use common::*;
use std::collections::HashMap;

/// The two replies must be the same; for errors, Lua wraps the command's error text with
/// the script's name, so the native text must be where the Lua one starts.
fn assert_same_reply(lua: &Reply, native: &Reply, step: usize) {
    match (lua, native) {
        (Reply::Error(lua), Reply::Error(native)) => assert!(
            lua.starts_with(native.as_str()),
            "step {step}: Lua said {lua:?}, native {native:?}"
        ),
        _ => assert_eq!(native, lua, "step {step}"),
    }
}

/// Compares the two keys' absolute expiries and TTLs after each step.
///
/// Where the server has a command-time snapshot (Redis 7.2+, Valkey), EXPIRE in the script and
/// the module read the same clock, once for the whole MULTI: the expiries are the same
/// millisecond and the TTLs the same second. Redis 7.0 reads the wall clock at each command,
/// so there the native expiry, armed just after the script's, may be later by no more than
/// the time the arming step took, and each TTL is what TTL's rounding gives at some instant
/// of that step.
struct ExpiryCheck {
    snapshot: bool,
    /// Per key: the last (Lua, native) expiries, and how long the step that armed them took.
    armed: HashMap<String, ((i64, i64), i64)>,
}

impl ExpiryCheck {
    fn new(flavor: Flavor) -> Self {
        ExpiryCheck {
            snapshot: flavor.has_command_time_snapshot(),
            armed: HashMap::new(),
        }
    }

    /// `r` holds, from `at`: TTL (Lua, native), then PEXPIRETIME (Lua, native).
    fn check(&mut self, key: &str, step: &Step, at: usize, n: usize) {
        let r = &step.replies;
        let (lua_ttl, native_ttl) = (r[at].int(), r[at + 1].int());
        let (lua_at, native_at) = (r[at + 2].int(), r[at + 3].int());
        if self.snapshot {
            assert_eq!(
                native_at, lua_at,
                "step {n}: native expires at {native_at}, Lua at {lua_at}"
            );
            assert_eq!(native_ttl, lua_ttl, "step {n}: TTL differs");
            return;
        }
        let slack = match self.armed.get(key) {
            Some((last, slack)) if *last == (lua_at, native_at) => *slack,
            _ => step.after_ms - step.before_ms,
        };
        self.armed
            .insert(key.to_string(), ((lua_at, native_at), slack));
        if lua_at < 0 || native_at < 0 {
            assert_eq!(native_at, lua_at, "step {n}: expiry presence differs");
        } else {
            assert!(
                (0..=slack).contains(&(native_at - lua_at)),
                "step {n}: native expires at {native_at}, Lua at {lua_at}, armed in a step of {slack} ms"
            );
        }
        for (ttl, at) in [(lua_ttl, lua_at), (native_ttl, native_at)] {
            if at < 0 {
                assert_eq!(ttl, at, "step {n}: TTL without an expiry");
            } else {
                // TTL replies (at - now + 500) / 1000, for a `now` inside this step.
                let earliest = (at - step.after_ms + 500).div_euclid(1000);
                let latest = (at - step.before_ms + 500).div_euclid(1000);
                assert!(
                    (earliest..=latest).contains(&ttl),
                    "step {n}: TTL {ttl} for an expiry at {at}"
                );
            }
        }
    }
}

on_every_server! {
    fn zwindow_matches_its_lua_idiom_call_for_call(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let sha = c.call(&["SCRIPT", "LOAD", ZWINDOW_LUA]).text();
        let mut expiry = ExpiryCheck::new(flavor);
        let mut rng = Rng::new(0x5eed_2026);
        let mut clocks = [1_000_000u64; 4]; // per key, in milliseconds of the caller's clock
        let (mut admitted, mut rejected) = (0, 0);
        for step in 0..3000 {
            let k = rng.below(4) as usize;
            let window = *rng.pick(&[10u64, 15, 20, 30, 60]);
            clocks[k] += rng.below(window * 1000 * 6 / 10);
            let now = format!("{}.{:03}", clocks[k] / 1000, clocks[k] % 1000);
            let limit = (1 + rng.below(5)).to_string();
            let member = format!("req-{step}");
            let (lua_key, native_key) = (format!("lua:{k}"), format!("native:{k}"));
            let args = [now.clone(), window.to_string(), limit.clone(), member.clone()];
            let mut lua = vec!["EVALSHA".to_string(), sha.clone(), "1".into(), lua_key.clone()];
            lua.extend(args.iter().cloned());
            let mut native = vec!["GOBLIN.ZWINDOW".to_string(), native_key.clone()];
            native.extend(args.iter().cloned());
            let s = side_by_side(
                &mut c,
                lua,
                native,
                &[&["ZRANGE", "0", "-1", "WITHSCORES"], &["TTL"], &["PEXPIRETIME"]],
                &lua_key,
                &native_key,
            );
            let r = &s.replies;
            assert_same_reply(&r[0], &r[1], step);
            assert_eq!(r[3], r[2], "step {step}: members and scores differ");
            expiry.check(&native_key, &s, 4, step);
            if r[1] == Reply::Int(1) {
                admitted += 1;
                // Armed in this step, `window` seconds from now.
                let at = r[7].int();
                let ms = window as i64 * 1000;
                assert!((s.before_ms + ms..=s.after_ms + ms).contains(&at), "step {step}: expiry {at} is not the window");
            } else {
                rejected += 1;
            }
        }
        // The generator must exercise both outcomes, or the comparison proves little.
        assert!(admitted > 500 && rejected > 500, "admitted {admitted}, rejected {rejected}");
    }
}

/// The INCREX idiom returns INCR's reply through a Lua number, a double: beyond 2^53 the
/// script's reply is rounded (and 2^63 does not fit back into an integer at all, which the
/// server's C cast turns into i64::MIN on x86-64). The stored counter is exact either way, and
/// so is the native reply. Anything else must be identical.
fn assert_same_counter_reply(lua: &Reply, native: &Reply, step: usize) {
    if let (Reply::Int(lua), Reply::Int(native)) = (lua, native) {
        if native.unsigned_abs() > 1 << 53 {
            let rounded = *native as f64;
            let fits = rounded < 9_223_372_036_854_775_808.0;
            assert!(
                (fits && *lua as f64 == rounded) || (!fits && *lua == i64::MIN),
                "step {step}: Lua said {lua}, native {native}"
            );
            return;
        }
    }
    assert_same_reply(lua, native, step);
}

on_every_server! {
    fn increx_matches_its_lua_idiom_call_for_call(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let sha = c.call(&["SCRIPT", "LOAD", INCREX_LUA]).text();
        let mut expiry = ExpiryCheck::new(flavor);
        let mut rng = Rng::new(0x1c0f_fee7);
        let values = ["0", "5", "-3", "abc", "1.5", "9223372036854775806", "9223372036854775807", "-9223372036854775808"];
        let seconds = ["-1", "0", "30", "60", "100", "1000", "86400"];
        let mut errors = 0;
        for step in 0..3000 {
            let k = rng.below(4);
            let (lua_key, native_key) = (format!("lua:{k}"), format!("native:{k}"));
            match rng.below(20) {
                // Now and then both keys get the same outside write: a value or another type.
                0 | 1 => {
                    let value = rng.pick(&values).to_string();
                    for key in [&lua_key, &native_key] {
                        c.call(&["SET", key, &value]);
                    }
                }
                2 => {
                    for key in [&lua_key, &native_key] {
                        c.call(&["DEL", key]);
                        c.call(&["ZADD", key, "1", "m"]);
                    }
                }
                3 => {
                    for key in [&lua_key, &native_key] {
                        c.call(&["DEL", key]);
                    }
                }
                _ => {}
            }
            let secs = rng.pick(&seconds).to_string();
            let lua = vec!["EVALSHA".into(), sha.clone(), "1".into(), lua_key.clone(), secs.clone()];
            let native = vec!["GOBLIN.INCREX".into(), native_key.clone(), secs.clone()];
            let s = side_by_side(
                &mut c,
                lua,
                native,
                &[&["TYPE"], &["GET"], &["TTL"], &["PEXPIRETIME"]],
                &lua_key,
                &native_key,
            );
            let r = &s.replies;
            assert_same_counter_reply(&r[0], &r[1], step);
            errors += usize::from(r[1].is_error());
            assert_eq!(r[3], r[2], "step {step}: type differs");
            if r[2] == Reply::Status("string".into()) {
                assert_eq!(r[5], r[4], "step {step}: value differs");
            }
            expiry.check(&native_key, &s, 6, step);
        }
        assert!(errors > 50 && errors < 2000, "errors {errors}");
    }
}

/// ZWINDOW's contract (docs/commands/goblin.zwindow.md), written as plainly as possible, to
/// check the module against.
#[derive(Default)]
struct LeaseModel {
    sets: HashMap<String, Vec<(String, f64)>>,
}

impl LeaseModel {
    fn zwindow(&mut self, key: &str, now: f64, window: f64, limit: i64, member: &str) -> i64 {
        let set = self.sets.entry(key.to_string()).or_default();
        set.retain(|(_, score)| *score > now - window);
        if let Some(slot) = set.iter_mut().find(|(m, _)| m == member) {
            slot.1 = now;
            return 1;
        }
        if (set.len() as i64) < limit {
            set.push((member.to_string(), now));
            return 1;
        }
        0
    }

    /// As ZRANGE WITHSCORES lists it: by score, then by member.
    fn listing(&self, key: &str) -> Vec<(String, f64)> {
        let mut set = self.sets.get(key).cloned().unwrap_or_default();
        set.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        set
    }
}

on_every_server! {
    fn lease_semantics_match_the_model(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let mut model = LeaseModel::default();
        let mut rng = Rng::new(42);
        let mut clock = [0u64; 3];
        let workers = ["w1", "w2", "w3", "w4"];
        let (mut refreshed, mut admitted, mut rejected) = (0, 0, 0);
        for step in 0..3000 {
            let k = rng.below(3) as usize;
            let key = format!("lease:{k}");
            // Fractional windows of 10 s or more, so no key reaches its real-time TTL.
            let window = *rng.pick(&[10.5, 12.25, 20.0, 30.75]);
            clock[k] += rng.below((window * 700.0) as u64);
            let now = clock[k] as f64 / 1000.0;
            let limit = 1 + rng.below(3) as i64;
            let member = *rng.pick(&workers);
            let held = model.listing(&key).iter().any(|(m, s)| m == member && *s > now - window);
            let expected = model.zwindow(&key, now, window, limit, member);
            let reply = c.call(&[
                "GOBLIN.ZWINDOW", &key, &format!("{now}"), &format!("{window}"), &limit.to_string(), member,
            ]);
            assert_eq!(reply, Reply::Int(expected), "step {step}: {key} now={now} window={window} limit={limit} {member}");
            match (expected, held) {
                (1, true) => refreshed += 1,
                (1, false) => admitted += 1,
                _ => rejected += 1,
            }
            let listing: Vec<(String, f64)> = c
                .call(&["ZRANGE", &key, "0", "-1", "WITHSCORES"])
                .texts()
                .chunks(2)
                .map(|pair| (pair[0].clone(), pair[1].parse().expect("score")))
                .collect();
            assert_eq!(listing, model.listing(&key), "step {step}");
        }
        assert!(refreshed > 300 && admitted > 300 && rejected > 300,
            "refreshed {refreshed}, admitted {admitted}, rejected {rejected}");
    }
}
