//! `make bench`: GOBLIN.INCREX and GOBLIN.ZWINDOW against the core commands and the Lua idioms,
//! on Redis 7.0, Redis 8.2 and Valkey 9.1, measured side by side in one run.
//!
//! Timing on a shared 2-core machine is noisy, so every comparison is a ratio of runs made on
//! the same server, interleaved (A B C A B C ...), taking the median of the rounds.
//!
//!     goblin-bench [--smoke] [--out DIR] [--servers redis70,redis82,valkey91]

mod flags;
mod load;
mod probes;
mod report;

use goblin_testkit::{Flavor, Reply, Server};
use load::{Sample, Shared, Workload, COUNTER_GROUP, POLICY_GROUP, WINDOW_GROUP};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct Config {
    pub smoke: bool,
    pub out: PathBuf,
    pub flavors: Vec<Flavor>,
    pub duration: Duration,
    pub rounds: usize,
    pub conns: usize,
    pub depths: Vec<usize>,
    pub counters: usize,
    pub sizes: Vec<usize>,
    pub size_calls: usize,
    pub evictions: Vec<usize>,
    pub eviction_base: usize,
    pub eviction_rounds: usize,
    pub backlog: usize,
}

impl Config {
    fn from_args() -> Config {
        let flags = flags::Flags::from_env();
        let smoke = flags.has("--smoke");
        let value = |flag: &str| flags.value(flag);
        let flavors = flags.flavors();
        let out = value("--out")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results"));
        if smoke {
            Config {
                smoke,
                out,
                flavors,
                duration: Duration::from_millis(150),
                rounds: 1,
                conns: 8,
                depths: vec![16, 1],
                counters: 2000,
                sizes: vec![10, 100, 1000],
                size_calls: 50,
                evictions: vec![0, 1, 10],
                eviction_base: 100,
                eviction_rounds: 5,
                backlog: 10_000,
            }
        } else {
            Config {
                smoke,
                out,
                flavors,
                duration: Duration::from_secs(2),
                rounds: 3,
                conns: 50,
                depths: vec![16, 1],
                counters: 1_000_000,
                sizes: vec![10, 100, 1_000, 10_000, 100_000],
                size_calls: 2000,
                evictions: vec![0, 1, 10, 100, 1000],
                eviction_base: 10_000,
                eviction_rounds: 200,
                backlog: 1_000_000,
            }
        }
    }
}

/// Everything measured on one server.
pub struct ServerResults {
    pub flavor: Flavor,
    pub version: String,
    /// (depth, workload) -> median sample over the rounds.
    pub throughput: HashMap<(usize, Workload), Sample>,
    pub by_size: Vec<(usize, f64)>,
    pub by_evicted: Vec<probes::Eviction>,
    pub memory: probes::Memory,
    pub backlog: probes::Backlog,
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn measure(flavor: Flavor, config: &Config) -> ServerResults {
    // The benchmark measures a server alone. Redis 8.10 is measured built with GCRA compiled
    // in (the release's source otherwise), so that Redis's own GCRA runs beside GOBLIN.GCRA on
    // one server.
    let mut builder = Server::builder(flavor)
        .args(["--maxclients", "1000"])
        .without_replica();
    if flavor == Flavor::Redis810 {
        builder = builder.binary(goblin_testkit::redis810_with_gcra());
    }
    let server = builder.start();
    let mut conn = server.conn();
    let version = goblin_testkit::info_field(&mut conn, "server", flavor.version_field());
    let shared = Arc::new(Shared {
        gcra_sha: conn.call(&["SCRIPT", "LOAD", load::GCRA_LUA]).text(),
        gcra_union_sha: conn.call(&["SCRIPT", "LOAD", load::GCRA_UNION_LUA]).text(),
        incr_pttl_sha: conn.call(&["SCRIPT", "LOAD", load::INCR_PTTL_LUA]).text(),
        increx_limiter_sha: conn
            .call(&["SCRIPT", "LOAD", load::INCREX_LIMITER_LUA])
            .text(),
        increx_sha: conn
            .call(&["SCRIPT", "LOAD", goblin_testkit::INCREX_LUA])
            .text(),
        zwindow_sha: conn
            .call(&["SCRIPT", "LOAD", goblin_testkit::ZWINDOW_LUA])
            .text(),
        clock: AtomicU64::new(1_000_000),
        server_clock_window_ms: AtomicU64::new(10_000),
    });
    let library = load::function_library();
    assert!(!conn
        .call(&["FUNCTION", "LOAD", "REPLACE", &library])
        .is_error());

    let mut throughput = HashMap::new();
    for &depth in &config.depths {
        for group in [&COUNTER_GROUP[..], &WINDOW_GROUP[..], &POLICY_GROUP[..]] {
            let mut samples: HashMap<Workload, Vec<Sample>> = HashMap::new();
            for round in 1..=config.rounds {
                for &workload in group {
                    // Redis's GCRA exists only where it was compiled in.
                    if workload == Workload::GcraNative
                        && conn.call(&["COMMAND", "INFO", "gcra"]).array()[0] == Reply::Nil
                    {
                        continue;
                    }
                    assert_eq!(conn.call(&["FLUSHALL", "SYNC"]), Reply::Status("OK".into()));
                    let sample = load::run(
                        server.port,
                        &shared,
                        workload,
                        config.conns,
                        depth,
                        config.duration,
                    );
                    let window = if workload == Workload::ZwindowServerClock {
                        let ms = shared.server_clock_window_ms.load(Ordering::Relaxed);
                        format!("  (window {ms} ms)")
                    } else {
                        String::new()
                    };
                    eprintln!(
                        "  {:<10} depth {depth:>2} round {round}/{}  {:<26} {:>10.0} ops/s  p50 {:>7.1} us  p99 {:>7.1} us{window}",
                        flavor.label(),
                        config.rounds,
                        workload.label(),
                        sample.ops_per_sec,
                        sample.p50_us,
                        sample.p99_us
                    );
                    if workload == Workload::Zwindow {
                        shared.size_server_clock_window(sample.ops_per_sec);
                    }
                    samples.entry(workload).or_default().push(sample);
                }
            }
            for (workload, runs) in samples {
                let pick = |f: fn(&Sample) -> f64| median(runs.iter().map(f).collect());
                let sample = Sample {
                    ops_per_sec: pick(|s| s.ops_per_sec),
                    p50_us: pick(|s| s.p50_us),
                    p99_us: pick(|s| s.p99_us),
                };
                throughput.insert((depth, workload), sample);
            }
        }
    }
    eprintln!(
        "  {}: time per call against members in the window",
        flavor.label()
    );
    let by_size = probes::per_call_by_size(&mut conn, &config.sizes, config.size_calls);
    eprintln!(
        "  {}: time per call against members evicted",
        flavor.label()
    );
    let by_evicted = probes::per_call_by_evicted(
        &mut conn,
        config.eviction_base,
        &config.evictions,
        config.eviction_rounds,
    );
    eprintln!(
        "  {}: a backlog of {} members",
        flavor.label(),
        config.backlog
    );
    let backlog = probes::backlog(&mut conn, config.backlog);
    eprintln!(
        "  {}: memory of {} counters",
        flavor.label(),
        config.counters
    );
    let memory = probes::memory(&mut conn, config.counters);
    ServerResults {
        flavor,
        version,
        throughput,
        by_size,
        by_evicted,
        memory,
        backlog,
    }
}

fn main() {
    let config = Config::from_args();
    let started = Instant::now();
    eprintln!(
        "goblin-bench: {} mode, {} connections, {:?} per run, {} rounds, servers: {}",
        if config.smoke { "smoke" } else { "full" },
        config.conns,
        config.duration,
        config.rounds,
        config
            .flavors
            .iter()
            .map(|f| f.label())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let results: Vec<ServerResults> = config
        .flavors
        .iter()
        .map(|&flavor| {
            eprintln!("{}:", flavor.label());
            measure(flavor, &config)
        })
        .collect();
    std::fs::create_dir_all(&config.out).expect("create output folder");
    let markdown = report::markdown(&config, &results, started.elapsed());
    let table = config.out.join("latest.md");
    std::fs::write(&table, &markdown).expect("write table");
    let headline = report::headline(&results);
    std::fs::write(config.out.join("headline.md"), &headline).expect("write headline");
    // A full run into bench/results also refreshes the README's copy (tests/layout.rs holds
    // the two equal), so that no figure is copied by hand.
    let default_out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results");
    if !config.smoke && config.out == default_out {
        let readme = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../README.md");
        let text = std::fs::read_to_string(&readme).expect("read README.md");
        let spliced =
            report::splice_headline(&text, &headline).expect("README.md has no headline block");
        std::fs::write(&readme, spliced).expect("write README.md");
    }
    let plot = config.out.join("latest.png");
    report::plot(&config, &results, &plot);
    println!("{markdown}");
    eprintln!(
        "goblin-bench: wrote {} and {} in {:.0?}",
        table.display(),
        plot.display(),
        started.elapsed()
    );
}
