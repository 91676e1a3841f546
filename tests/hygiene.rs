//! Resource hygiene: a workload through every command the module registered on the server (from
//! the server's own description of each, see `common/commands.rs`) and its error paths leaves
//! nothing behind. Once its keys have expired, or been flushed where a command keeps a key
//! without a TTL (as INCREX may), the server's memory is back where it started.

mod common;
use common::*;
use std::time::Duration;

/// Values that take each argument down its paths: accepted ones with short TTLs (about a
/// second), and the ones every parser refuses.
fn value(rng: &mut Rng, arg: &ArgShape) -> Vec<u8> {
    let pool: &[&str] = match arg.kind.as_str() {
        // A blocking command's timeout: a millisecond or two, never 0 (for ever).
        _ if arg.name == "timeout" => &["0.001", "0.002", "-1", "x", "1e300"],
        "integer" => &["1", "1", "2", "3", "0", "-1", "x", "9223372036854775807"],
        "double" => &["1", "0.5", "1.5", "1e300", "nan", "-1", "abc"],
        "unix-time" => &["1", "x"],
        _ => &[
            "m0",
            "m1",
            "m2",
            "m3",
            "token",
            "",
            "a-longer-member-of-some-size",
        ],
    };
    rng.pick(pool).as_bytes().to_vec()
}

/// 30,000 calls over about 1,000 keys, every command of `shapes` alike: admits, refreshes,
/// rejections, evictions, releases, and every error reply, with lock strings for the releases.
fn workload(c: &mut Conn, shapes: &[Shape], round: u64) {
    let mut rng = Rng::new(round + 1);
    for _batch in 0..60 {
        let mut commands: Vec<Vec<Vec<u8>>> = Vec::new();
        for i in 0..500 {
            let shape = rng.pick(shapes);
            let mut args = shape.generate(&mut rng, &mut value, &mut |rng| {
                format!("k{}", rng.below(1000)).into_bytes()
            });
            if i % 50 == 0 {
                args.pop(); // a wrong argument count, now and then
            }
            commands.push(args);
            if i % 100 == 0 {
                let lock = format!("k{}", rng.below(1000));
                commands.push(
                    ["SET", &lock, "token", "PX", "1000"]
                        .map(|w| w.as_bytes().to_vec())
                        .to_vec(),
                );
            }
        }
        c.pipeline(&commands);
    }
}

/// The keys left to their expiry, with their PTTL: not those without a TTL, nor those whose
/// TTL runs past the test (a GOBLIN.MGCRA refund on a counter near `i64::MAX` is a valid TAT,
/// 292,000 years away); FLUSHALL takes those.
fn lingering(c: &mut Conn) -> Vec<(String, i64)> {
    let keys = c.call(&["KEYS", "*"]).texts();
    keys.into_iter()
        .map(|key| {
            let pttl = c.call(&["PTTL", &key]).int();
            (key, pttl)
        })
        .filter(|(_, pttl)| *pttl != -1 && *pttl <= 3_600_000)
        .collect()
}

fn settle(c: &mut Conn) -> i64 {
    assert!(
        wait_until(Duration::from_secs(30), || lingering(c).is_empty()),
        "the workload's keys with a TTL did not expire: {:?}",
        lingering(c).into_iter().take(5).collect::<Vec<_>>()
    );
    assert_eq!(c.call(&["FLUSHALL", "SYNC"]), Reply::Status("OK".into()));
    // Let serverCron shrink the emptied tables and trim the client's buffers.
    std::thread::sleep(Duration::from_millis(1500));
    // The replication backlog (a ring of up to 1 MB, which the writes fill) and the replica's
    // client are the server's, and grow with any writes: what is left is the dataset's and the
    // module's.
    let field =
        |c: &mut Conn, name: &str| -> i64 { info_field(c, "memory", name).parse().unwrap() };
    field(c, "used_memory")
        - field(c, "mem_total_replication_buffers")
        - field(c, "mem_clients_slaves")
}

on_every_server! {
    fn memory_returns_to_its_baseline_after_the_keys_expire(flavor: Flavor) {
        let server = Server::builder(flavor).args(["--hz", "100"]).start();
        let mut c = server.conn();
        let shapes = module_commands(&mut c);
        // One round first, so one-time growth (tables, the reply buffer) is in the baseline.
        workload(&mut c, &shapes, 0);
        let baseline = settle(&mut c);
        for round in 1..=3 {
            workload(&mut c, &shapes, round);
        }
        let after = settle(&mut c);
        // 90,000 more calls: a leak of even 2 bytes a call would pass 128 KiB.
        let grown = after - baseline;
        eprintln!("{flavor:?}: used_memory less replication {baseline} -> {after} ({grown:+} bytes)");
        assert!(grown < 128 * 1024, "used_memory grew by {grown} bytes (from {baseline} to {after})");
        // Every command ran, and got past its errors.
        let info = c.call(&["INFO", "goblin"]).text();
        assert!(info.contains("goblin_zwindow_evicted:") && !info.contains("goblin_zwindow_evicted:0\r"));
        let calls = command_calls(&mut c);
        for shape in &shapes {
            let ran = calls.get(&shape.name).copied().unwrap_or(0);
            assert!(ran > 1000, "{}: {ran} calls", shape.name);
        }
    }
}
