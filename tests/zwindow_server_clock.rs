//! GOBLIN.ZWINDOW with `now` = `*`: the server's clock. A lease shared by machines whose clocks
//! disagree is held twice with client times, and never with `*`; `*` is the sliding-window idiom
//! fed by the server's TIME, call for call; replicas and the AOF get the resolved time.

mod common;
use common::*;
use std::collections::HashMap;
use std::time::Duration;

const WORKERS: [&str; 3] = ["w1", "w2", "w3"];

fn zwindow(c: &mut Conn, now: &str, window: &str, member: &str) -> i64 {
    c.call(&["GOBLIN.ZWINDOW", "lock", now, window, "1", member])
        .int()
}

/// GOBLIN.ZWINDOW lock * 0.02 1 `member`, and the score of its grant read in the same
/// transaction (a 20 ms lease may lapse before a later read on a loaded machine): the grant's
/// server time, or `None` if refused.
fn granted_score(c: &mut Conn, member: &str) -> Option<f64> {
    let replies = c.pipeline(&[
        vec!["MULTI".to_string()],
        ["GOBLIN.ZWINDOW", "lock", "*", "0.02", "1", member]
            .map(String::from)
            .to_vec(),
        ["ZSCORE", "lock", member].map(String::from).to_vec(),
        vec!["EXEC".to_string()],
    ]);
    let exec = replies.last().expect("EXEC").array().to_vec();
    (exec[0].int() == 1).then(|| exec[1].text().parse().expect("a score"))
}

/// Two machines, one 5 s ahead of the true time and one 5 s behind, share a mutex with a
/// 10 s lease, sending their own clocks. The true time is simulated, so the test runs at once.
/// Returns how often a worker was granted the lock while another still held it in true time.
fn double_holds_with_client_clocks(c: &mut Conn) -> usize {
    let skew = [5.0, -5.0, 0.0];
    let window = 10.0;
    let mut rng = Rng::new(0x0005_cee0);
    let mut true_time = 1_000_000.0f64;
    // True time until which each worker's lease runs.
    let mut held_until: HashMap<usize, f64> = HashMap::new();
    let mut double_holds = 0;
    for _ in 0..3000 {
        true_time += rng.below(4000) as f64 / 1000.0;
        let w = rng.below(2) as usize;
        if rng.below(6) == 0 {
            if c.call(&["GOBLIN.CAD", "lock", WORKERS[w]]) == Reply::Int(1) {
                held_until.remove(&w);
            }
            continue;
        }
        let clock = format!("{:.3}", true_time + skew[w]);
        if zwindow(c, &clock, "10", WORKERS[w]) == 1 {
            if held_until
                .iter()
                .any(|(&v, &until)| v != w && until > true_time)
            {
                double_holds += 1;
            }
            held_until.insert(w, true_time + window);
        }
    }
    double_holds
}

on_every_server! {
    fn two_clocks_hold_a_client_time_mutex_twice_and_a_server_time_mutex_never(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let doubles = double_holds_with_client_clocks(&mut c);
        assert!(doubles > 50, "with client clocks 10 s apart the lock was held twice only {doubles} times");

        // The same workers with `*`: the server's clock decides, whatever theirs say. The
        // lease is short (20 ms) so that it lapses often while the test runs.
        c.call(&["DEL", "lock"]);
        let window = 0.02;
        let mut rng = Rng::new(0x005e_002e);
        // Each worker's last grant, at the server time its score records, until released.
        let mut granted_at: HashMap<&str, f64> = HashMap::new();
        let (mut grants, mut refusals, mut releases) = (0, 0, 0);
        for step in 0..2500 {
            let worker = *rng.pick(&WORKERS);
            if rng.below(5) == 0 {
                if c.call(&["GOBLIN.CAD", "lock", worker]) == Reply::Int(1) {
                    granted_at.remove(worker);
                    releases += 1;
                }
            } else if let Some(at) = granted_score(&mut c, worker) {
                for (other, &since) in &granted_at {
                    assert!(
                        *other == worker || since <= at - window,
                        "step {step}: {worker} got the lock at {at} while {other} held it since {since}"
                    );
                }
                granted_at.insert(worker, at);
                grants += 1;
            } else {
                refusals += 1;
            }
            if rng.below(3) == 0 {
                std::thread::sleep(Duration::from_millis(rng.below(4)));
            }
        }
        eprintln!(
            "{}: client clocks: held twice {doubles} times in 3000 steps; `*`: never in 2500 \
             ({grants} grants, {refusals} refusals, {releases} releases)",
            flavor.label()
        );
        assert!(grants > 200 && refusals > 200 && releases > 100, "grants {grants}, refusals {refusals}, releases {releases}");
    }
}

/// ZWINDOW's Lua idiom, with `now` from the server's TIME inside the script:
/// whole milliseconds, divided once, as the module computes `*`.
const ZWINDOW_SERVER_TIME_LUA: &str = r#"local time = redis.call('TIME')
local now = (tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)) / 1000
redis.call('zremrangebyscore', KEYS[1], 0, now - tonumber(ARGV[1]))
if redis.call('zcard', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('zadd', KEYS[1], now, ARGV[3])
  redis.call('expire', KEYS[1], ARGV[1])
  return 1
end
return 0"#;

on_every_server! {
    /// Side by side in one MULTI, where the server has a command-time snapshot (Redis 7.2+,
    /// Valkey): TIME in the script and `*` read the same instant. Redis 7.0 has none: the script
    /// and the module read the clock at two moments, so there `*` is checked to be the server's
    /// clock at the call, between a TIME before and a TIME after.
    fn server_time_matches_the_idiom_fed_by_time(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        if !flavor.has_command_time_snapshot() {
            for step in 0..500 {
                let before = server_ms(&mut c);
                assert_eq!(c.call(&["GOBLIN.ZWINDOW", "w", "*", "30", "1000", &format!("m{step}")]), Reply::Int(1));
                let after = server_ms(&mut c);
                let at: f64 = c.call(&["ZSCORE", "w", &format!("m{step}")]).text().parse().expect("a score");
                assert!(
                    (before as f64 / 1000.0..=after as f64 / 1000.0).contains(&at),
                    "step {step}: * was {at}, the call ran between {before} and {after} ms"
                );
            }
            return;
        }
        let sha = c.call(&["SCRIPT", "LOAD", ZWINDOW_SERVER_TIME_LUA]).text();
        let mut rng = Rng::new(0x7153_2026);
        let (mut admitted, mut rejected) = (0, 0);
        for step in 0..2000 {
            // Many keys, so that windows have room as often as not.
            let k = rng.below(300);
            let (lua_key, native_key) = (format!("lua:{k}"), format!("native:{k}"));
            let window = *rng.pick(&["1", "2", "5"]);
            let limit = (1 + rng.below(4)).to_string();
            if rng.below(5) == 0 {
                // Members from a little while ago, some of them out of the window by now.
                let now = server_ms(&mut c) as f64 / 1000.0;
                let old = format!("{:.3}", now - rng.below(6000) as f64 / 1000.0);
                for key in [&lua_key, &native_key] {
                    c.call(&["ZADD", key, &old, &format!("old-{step}")]);
                }
            }
            let member = format!("req-{step}");
            let replies = c.pipeline(&[
                vec!["MULTI".to_string()],
                vec!["EVALSHA".into(), sha.clone(), "1".into(), lua_key.clone(), window.into(), limit.clone(), member.clone()],
                vec!["GOBLIN.ZWINDOW".into(), native_key.clone(), "*".into(), window.into(), limit.clone(), member.clone()],
                vec!["ZRANGE".into(), lua_key.clone(), "0".into(), "-1".into(), "WITHSCORES".into()],
                vec!["ZRANGE".into(), native_key.clone(), "0".into(), "-1".into(), "WITHSCORES".into()],
                vec!["PEXPIRETIME".into(), lua_key.clone()],
                vec!["PEXPIRETIME".into(), native_key.clone()],
                vec!["EXEC".into()],
            ]);
            let r = replies.last().expect("EXEC").array().to_vec();
            assert_eq!(r[1], r[0], "step {step}: reply");
            assert_eq!(r[3], r[2], "step {step}: members and scores");
            assert_eq!(r[5], r[4], "step {step}: expiry");
            if r[1] == Reply::Int(1) { admitted += 1 } else { rejected += 1 }
        }
        assert!(admitted > 300 && rejected > 300, "admitted {admitted}, rejected {rejected}");
    }
}

on_every_server! {
    /// Replicas and the AOF get the time `*` resolved to, never `*`.
    fn replicas_and_the_aof_get_the_resolved_time(flavor: Flavor) {
        let dir = TempDir::new("zwindow-star");
        let primary = Server::builder(flavor).dir(&dir.0).args(AOF_ALWAYS).start();
        let replica = primary.replica().expect("replica mode");
        let mut p = primary.conn();
        for i in 0..200 {
            let member = format!("w{}", i % 7);
            p.call(&["GOBLIN.ZWINDOW", &format!("lease:{}", i % 5), "*", "30", "3", &member]);
        }
        assert_eq!(p.call(&["WAIT", "1", "10000"]), Reply::Int(1));
        let mut r = replica.conn();
        for k in 0..5 {
            let key = format!("lease:{k}");
            assert_eq!(snapshot(&mut r, &key), snapshot(&mut p, &key), "{key}");
        }
        let commands = aof_commands(&aof_text(&dir.0));
        let zadds: Vec<&Vec<String>> = commands.iter().filter(|c| c[0] == "ZADD").collect();
        assert!(!zadds.is_empty());
        for zadd in zadds {
            let score: f64 = zadd[2].parse().unwrap_or_else(|_| panic!("a ZADD without a time: {zadd:?}"));
            assert!(score > 1.7e9, "{zadd:?}");
        }
    }
}
