//! A sliding-window rate limiter with GOBLIN.ZWINDOW: at most 3 requests in any 2 seconds, each
//! request recorded under a unique id. A rejected caller is told when to retry: when the oldest
//! request in the window leaves it.
//!
//!     make run
//!     cargo run --example sliding_window

use std::time::{Duration, SystemTime, UNIX_EPOCH};

const LIMIT: i64 = 3;
const WINDOW: f64 = 2.0;

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Returns `Ok(None)` if admitted, or `Ok(Some(retry_after))` if the window is full.
fn attempt(
    con: &mut redis::Connection,
    key: &str,
    request_id: &str,
) -> redis::RedisResult<Option<f64>> {
    let at = now();
    let admitted: i64 = redis::cmd("GOBLIN.ZWINDOW")
        .arg(key)
        .arg(at)
        .arg(WINDOW)
        .arg(LIMIT)
        .arg(request_id)
        .query(con)?;
    if admitted == 1 {
        return Ok(None);
    }
    // The oldest request leaves the window at its time + WINDOW.
    let oldest: Vec<(String, f64)> = redis::cmd("ZRANGE")
        .arg(key)
        .arg(0)
        .arg(0)
        .arg("WITHSCORES")
        .query(con)?;
    let retry_after = oldest
        .first()
        .map(|(_, score)| score + WINDOW - at)
        .unwrap_or(0.0);
    Ok(Some(retry_after.max(0.0)))
}

fn main() -> redis::RedisResult<()> {
    let url = std::env::var("GOBLIN_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let mut con = redis::Client::open(url)?.get_connection()?;
    let key = format!("rl:api:{}", std::process::id());
    let id = |n: u32| format!("req-{}-{n}", std::process::id());

    let mut admitted = 0;
    let mut retry = 0.0;
    for n in 1..=5 {
        match attempt(&mut con, &key, &id(n))? {
            None => {
                admitted += 1;
                println!("request {n}: admitted");
            }
            Some(after) => {
                retry = after;
                println!("request {n}: rejected, retry after {after:.3}s");
            }
        }
    }
    assert_eq!(
        admitted, LIMIT,
        "{admitted} admitted in one burst, not {LIMIT}"
    );
    assert!(retry > 0.0 && retry <= WINDOW, "retry-after {retry}");

    std::thread::sleep(Duration::from_secs_f64(retry + 0.05));
    let later = attempt(&mut con, &key, &id(6))?;
    assert_eq!(
        later, None,
        "still rejected after waiting the advertised retry-after"
    );
    println!("request 6: admitted after waiting {retry:.3}s, as advertised");
    let _: () = redis::cmd("DEL").arg(&key).query(&mut con)?;
    println!("sliding_window: 3 of 5 burst requests admitted; retry-after was exact");
    Ok(())
}
