//! Resource hygiene: a workload through every command and every error path leaves nothing
//! behind. Once its keys have expired, the server's memory is back where it started.

mod common;
use common::*;
use std::time::Duration;

/// 30,000 calls over 3,000 keys with 1-second TTLs: admits, refreshes, rejections, evictions,
/// releases, and every error reply.
fn workload(c: &mut Conn, round: u64) {
    let mut rng = Rng::new(round + 1);
    for batch in 0..60 {
        let mut commands: Vec<Vec<String>> = Vec::new();
        for i in 0..500 {
            let k = rng.below(1000);
            let now = format!("{}.{}", batch * 10 + i / 50, rng.below(1000));
            let member = format!("m{}", rng.below(20));
            let command: Vec<String> = match rng.below(12) {
                0 => vec!["GOBLIN.INCREX".into(), format!("c{k}"), "1".into()],
                1 => vec!["GOBLIN.INCREX".into(), format!("c{k}"), "x".into()],
                2 => vec!["GOBLIN.INCREX".into(), format!("w{k}"), "1".into()], // WRONGTYPE
                3 => vec![
                    "GOBLIN.INCREX".into(),
                    format!("c{k}"),
                    "9223372036854775807".into(),
                ],
                4..=6 => vec![
                    "GOBLIN.ZWINDOW".into(),
                    format!("w{k}"),
                    now,
                    "1".into(),
                    "3".into(),
                    member,
                ],
                7 => vec![
                    "GOBLIN.ZWINDOW".into(),
                    format!("w{k}"),
                    "nan".into(),
                    "1".into(),
                    "3".into(),
                    member,
                ],
                8 => vec![
                    "GOBLIN.ZWINDOW".into(),
                    format!("w{k}"),
                    now,
                    "1e300".into(),
                    "3".into(),
                    member,
                ],
                9 => vec![
                    "GOBLIN.ZWINDOW".into(),
                    format!("c{k}"),
                    now,
                    "1".into(),
                    "3".into(),
                    member,
                ],
                10 => vec!["GOBLIN.CAD".into(), format!("w{k}"), member],
                _ => vec!["GOBLIN.CAD".into(), format!("l{k}"), "token".into()],
            };
            commands.push(command);
            if i % 100 == 0 {
                commands.push(vec![
                    "SET".into(),
                    format!("l{k}"),
                    "token".into(),
                    "PX".into(),
                    "1000".into(),
                ]);
                commands.push(vec![
                    "GOBLIN.ZWINDOW".into(),
                    format!("w{k}"),
                    "1".into(),
                    "1".into(),
                ]); // arity
            }
        }
        c.pipeline(&commands);
    }
}

fn settle(c: &mut Conn) -> i64 {
    assert!(
        wait_until(Duration::from_secs(30), || c.call(&["DBSIZE"])
            == Reply::Int(0)),
        "the workload's keys did not expire"
    );
    // Let serverCron shrink the emptied tables and trim the client's buffers.
    std::thread::sleep(Duration::from_millis(1500));
    info_field(c, "memory", "used_memory").parse().unwrap()
}

on_every_server! {
    fn memory_returns_to_its_baseline_after_the_keys_expire(flavor: Flavor) {
        let server = Server::builder(flavor).args(["--hz", "100"]).start();
        let mut c = server.conn();
        // One round first, so one-time growth (tables, the reply buffer) is in the baseline.
        workload(&mut c, 0);
        let baseline = settle(&mut c);
        for round in 1..=3 {
            workload(&mut c, round);
        }
        let after = settle(&mut c);
        // 90,000 more calls: a leak of even 2 bytes a call would pass 128 KiB.
        let grown = after - baseline;
        eprintln!("{flavor:?}: used_memory {baseline} -> {after} ({grown:+} bytes)");
        assert!(grown < 128 * 1024, "used_memory grew by {grown} bytes (from {baseline} to {after})");
        let info = c.call(&["INFO", "goblin"]).text();
        assert!(info.contains("goblin_zwindow_evicted:") && !info.contains("goblin_zwindow_calls:0"));
    }
}
