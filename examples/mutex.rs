//! A mutex with a lease: GOBLIN.ZWINDOW with limit 1 takes or renews the lock, GOBLIN.CAD gives
//! it back. The holder renews while it works; a contender waits; the release hands the lock
//! over at once, without waiting for the lease.
//!
//!     make run
//!     cargo run --example mutex

const LEASE: f64 = 5.0;

/// Takes the lock, or renews it if `owner` already holds it. True if `owner` holds it now.
fn lock(con: &mut redis::Connection, key: &str, owner: &str) -> redis::RedisResult<bool> {
    let held: i64 = redis::cmd("GOBLIN.ZWINDOW")
        .arg(key)
        // `*`: the server keeps the time, so holders on machines whose clocks disagree
        // still agree on who holds what.
        .arg("*")
        .arg(LEASE)
        .arg(1)
        .arg(owner)
        .query(con)?;
    Ok(held == 1)
}

/// Gives the lock back, only if `owner` holds it.
fn unlock(con: &mut redis::Connection, key: &str, owner: &str) -> redis::RedisResult<bool> {
    let released: i64 = redis::cmd("GOBLIN.CAD").arg(key).arg(owner).query(con)?;
    Ok(released == 1)
}

fn main() -> redis::RedisResult<()> {
    let url = std::env::var("GOBLIN_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let mut con = redis::Client::open(url)?.get_connection()?;
    let key = format!("lock:nightly-report:{}", std::process::id());

    assert!(lock(&mut con, &key, "worker-a")?);
    println!("worker-a: took the lock");
    for step in 1..=3 {
        // ... a slice of work, then renew before the lease runs out ...
        assert!(
            !lock(&mut con, &key, "worker-b")?,
            "worker-b got a held lock"
        );
        println!("worker-b: lock busy (step {step})");
        assert!(
            lock(&mut con, &key, "worker-a")?,
            "worker-a lost its own lock"
        );
        println!("worker-a: renewed its lease (step {step})");
    }
    assert!(
        !unlock(&mut con, &key, "worker-b")?,
        "worker-b released a lock it does not hold"
    );
    println!("worker-b: cannot release a lock it does not hold");
    assert!(unlock(&mut con, &key, "worker-a")?);
    println!("worker-a: released the lock");
    assert!(
        lock(&mut con, &key, "worker-b")?,
        "the released lock was not free"
    );
    println!("worker-b: took the lock at once, {LEASE}s lease not waited for");
    unlock(&mut con, &key, "worker-b")?;
    println!("mutex: exclusive, renewable, released by its holder only");
    Ok(())
}
