//! A counting semaphore that survives a crashed holder: 3 permits with a 1-second lease.
//! Holders renew while they work; one "crashes" (stops renewing) and its permit comes back by
//! itself when the lease ages out, with no unlock and no sweeper.
//!
//!     make run
//!     cargo run --example semaphore

use std::time::{Duration, Instant};

const PERMITS: i64 = 3;
const LEASE: f64 = 1.0;

fn acquire(con: &mut redis::Connection, key: &str, holder: &str) -> redis::RedisResult<bool> {
    let got: i64 = redis::cmd("GOBLIN.ZWINDOW")
        .arg(key)
        // `*`: the server keeps the time, so holders on machines whose clocks disagree
        // still agree on who holds what.
        .arg("*")
        .arg(LEASE)
        .arg(PERMITS)
        .arg(holder)
        .query(con)?;
    Ok(got == 1)
}

fn main() -> redis::RedisResult<()> {
    let url = std::env::var("GOBLIN_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let mut con = redis::Client::open(url)?.get_connection()?;
    let key = format!("sem:db-connections:{}", std::process::id());

    for holder in ["w1", "w2", "w3"] {
        assert!(acquire(&mut con, &key, holder)?);
        println!("{holder}: took a permit");
    }
    assert!(
        !acquire(&mut con, &key, "w4")?,
        "a fourth permit was handed out"
    );
    println!("w4: all {PERMITS} permits are out");

    // w2 crashes: it never renews again. w1 and w3 keep renewing; w4 keeps asking.
    println!("w2: crashed (stops renewing)");
    let started = Instant::now();
    let waited = loop {
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            acquire(&mut con, &key, "w1")? && acquire(&mut con, &key, "w3")?,
            "a live holder lost its permit"
        );
        if acquire(&mut con, &key, "w4")? {
            break started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "w2's permit never came back"
        );
    };
    println!(
        "w4: took w2's permit after {:.1}s (the lease is {LEASE}s)",
        waited.as_secs_f64()
    );
    assert!(
        waited.as_secs_f64() >= LEASE - 0.25,
        "w2's permit came back before its lease ended"
    );
    let holders: Vec<String> = redis::cmd("ZRANGE")
        .arg(&key)
        .arg(0)
        .arg(-1)
        .query(&mut con)?;
    let mut holders = holders;
    holders.sort();
    assert_eq!(holders, ["w1", "w3", "w4"]);
    println!("semaphore: holders now {holders:?}; the crashed holder's permit healed itself");
    let _: () = redis::cmd("DEL").arg(&key).query(&mut con)?;
    Ok(())
}
