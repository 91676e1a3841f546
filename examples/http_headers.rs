//! An HTTP API's rate limiter with GOBLIN.GCRA: 5 requests in a burst, then one every 2
//! seconds, per user. One call per request answers all four things the response needs:
//! allowed or not, the remaining quota, when to retry, and when the quota is full again. They
//! become the IETF `RateLimit` and `RateLimit-Policy` headers and `Retry-After`, with the
//! server's clock, not the client's.
//!
//!     make run                             # a server with Goblin on 127.0.0.1:6379
//!     cargo run --example http_headers     # GOBLIN_URL=redis://host:port/ to point elsewhere

/// At most MAX_BURST + 1 at once, and TOKENS_PER_PERIOD more every PERIOD seconds.
const MAX_BURST: i64 = 4;
const TOKENS_PER_PERIOD: i64 = 1;
const PERIOD: i64 = 2;

/// What an HTTP server answers one request.
struct Response {
    status: u16,
    headers: Vec<(&'static str, String)>,
}

/// Asks the limiter about one request by `user`.
fn limit(con: &mut redis::Connection, user: &str) -> redis::RedisResult<Response> {
    // [limited, limit, remaining, retry_after, reset_after]
    let [limited, quota, remaining, retry_after, reset_after]: [i64; 5] = redis::cmd("GOBLIN.GCRA")
        .arg(format!("ratelimit:{user}"))
        .arg(MAX_BURST)
        .arg(TOKENS_PER_PERIOD)
        .arg(PERIOD)
        .query(con)?;
    let mut headers = vec![
        // The quota, and the window in which it fills up again from empty.
        (
            "RateLimit-Policy",
            format!(
                "\"burst\";q={quota};w={}",
                quota * PERIOD / TOKENS_PER_PERIOD
            ),
        ),
        // What is left now, and in how many seconds the quota is full again.
        (
            "RateLimit",
            format!("\"burst\";r={remaining};t={reset_after}"),
        ),
    ];
    let status = if limited == 1 {
        headers.push(("Retry-After", retry_after.to_string()));
        429
    } else {
        200
    };
    Ok(Response { status, headers })
}

fn main() -> redis::RedisResult<()> {
    let url = std::env::var("GOBLIN_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let mut con = redis::Client::open(url)?.get_connection()?;
    let user = format!("user42:{}", std::process::id());

    let mut statuses = Vec::new();
    for request in 1..=7 {
        let response = limit(&mut con, &user)?;
        let headers: Vec<String> = response
            .headers
            .iter()
            .map(|(name, value)| format!("{name}: {value}"))
            .collect();
        println!(
            "request {request}: {}  {}",
            response.status,
            headers.join("  ")
        );
        statuses.push(response.status);
    }
    // The burst of 5, then limited, with a Retry-After of the 2 s interval.
    assert_eq!(
        statuses,
        [200, 200, 200, 200, 200, 429, 429],
        "the limiter answered {statuses:?}"
    );
    let sixth = limit(&mut con, &user)?;
    let retry_after = sixth
        .headers
        .iter()
        .find(|(name, _)| *name == "Retry-After")
        .expect("Retry-After");
    assert_eq!(retry_after.1, PERIOD.to_string());

    // After Retry-After seconds the next request gets through.
    std::thread::sleep(std::time::Duration::from_millis(PERIOD as u64 * 1000 + 100));
    let later = limit(&mut con, &user)?;
    println!("after {PERIOD} s: {}", later.status);
    assert_eq!(later.status, 200, "a request after Retry-After was refused");
    let _: () = redis::cmd("DEL")
        .arg(format!("ratelimit:{user}"))
        .query(&mut con)?;
    println!(
        "http_headers: 5 of 7 allowed, 429 with Retry-After: {PERIOD}, and allowed again after it"
    );
    Ok(())
}
