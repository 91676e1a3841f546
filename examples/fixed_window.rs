//! A fixed-window HTTP-style rate limiter with GOBLIN.INCREX: at most 5 requests per user per
//! 10-second window, counted from the first request. Prints what an HTTP server would answer,
//! with the usual RateLimit headers computed from the reply and the key's TTL.
//!
//!     make run                             # a server with Goblin on 127.0.0.1:6379
//!     cargo run --example fixed_window     # GOBLIN_URL=redis://host:port/ to point elsewhere

use redis::Commands;

const LIMIT: i64 = 5;
const WINDOW_SECONDS: i64 = 10;

fn main() -> redis::RedisResult<()> {
    let url = std::env::var("GOBLIN_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let mut con = redis::Client::open(url)?.get_connection()?;
    let key = format!("rate:user42:{}", std::process::id());

    let mut allowed = 0;
    for request in 1..=8 {
        // One atomic call: count the request, and arm the window on the first one.
        let count: i64 = redis::cmd("GOBLIN.INCREX")
            .arg(&key)
            .arg(WINDOW_SECONDS)
            .query(&mut con)?;
        let reset: i64 = con.ttl(&key)?;
        let remaining = (LIMIT - count).max(0);
        if count <= LIMIT {
            allowed += 1;
            println!("request {request}: 200 OK          RateLimit-Remaining: {remaining}  RateLimit-Reset: {reset}");
        } else {
            println!("request {request}: 429 Too Many    Retry-After: {reset}");
        }
    }
    let _: () = con.del(&key)?;
    assert_eq!(
        allowed, LIMIT,
        "the limiter let {allowed} requests through, not {LIMIT}"
    );
    println!("fixed_window: {LIMIT} of 8 requests allowed in one {WINDOW_SECONDS}s window");
    Ok(())
}
