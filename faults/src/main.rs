//! `make faults`: the fault campaign on each server, one after the other.
//!
//! ```text
//! faults [--servers valkey91,redis70] [--seconds 180] [--seed 7] [--module path]
//!        [--phase sentinel|cluster] [--until 43.5] [--faults kill-as-granted,partition|none]
//!        [--planted NAME] [--stop-on-violation] [--no-namespaces] [--verbose]
//! ```
//!
//! Exits 1 on any violation.

use std::path::PathBuf;
use std::process::ExitCode;

use goblin_faults::campaign::{self, Config};
use goblin_faults::history::FaultKind;
use goblin_faults::report;
use goblin_faults::topology::Shape;
use goblin_testkit::Flavor;

fn usage(problem: &str) -> ExitCode {
    eprintln!("faults: {problem}");
    eprintln!(
        "usage: faults [--servers a,b] [--seconds N] [--seed N] [--module PATH] [--phase sentinel|cluster] \
         [--until SECONDS] [--faults kind,...] [--planted NAME] [--stop-on-violation] [--no-namespaces] [--verbose]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut servers: Vec<Flavor> = Flavor::ALL.to_vec();
    let mut seconds = 180;
    let mut seed = None;
    let mut module = report::default_module();
    let mut phase = None;
    let mut until_ms = None;
    let mut kinds = None;
    let mut env = Vec::new();
    let mut stop_on_violation = false;
    let mut no_namespaces = false;
    let mut verbose = false;
    while let Some(arg) = args.next() {
        let mut value = || args.next().filter(|v| !v.is_empty());
        match arg.as_str() {
            "--servers" => {
                let Some(list) = value() else {
                    return usage("--servers needs a list");
                };
                servers = Vec::new();
                for name in list.split(',') {
                    match Flavor::from_name(name.trim()) {
                        Some(flavor) => servers.push(flavor),
                        None => {
                            return usage(&format!("no server {name:?} in scripts/servers.list"))
                        }
                    }
                }
            }
            "--seconds" => match value().and_then(|v| v.parse().ok()) {
                Some(n) => seconds = n,
                None => return usage("--seconds needs a number"),
            },
            "--seed" => match value().and_then(|v| v.parse().ok()) {
                Some(n) => seed = Some(n),
                None => return usage("--seed needs a number"),
            },
            "--module" => match value() {
                Some(path) => module = PathBuf::from(path),
                None => return usage("--module needs a path"),
            },
            "--phase" => match value().as_deref() {
                Some("sentinel") => phase = Some(Shape::Sentinel),
                Some("cluster") => phase = Some(Shape::Cluster),
                _ => return usage("--phase is sentinel or cluster"),
            },
            "--until" => match value().and_then(|v| v.parse::<f64>().ok()) {
                Some(s) => until_ms = Some((s * 1000.0) as u64),
                None => return usage("--until needs seconds"),
            },
            "--faults" => {
                let Some(list) = value() else {
                    return usage("--faults needs a list");
                };
                let mut chosen = Vec::new();
                for name in list.split(',').filter(|name| *name != "none") {
                    match FaultKind::named(name.trim()) {
                        Some(kind) => chosen.push(kind),
                        None => return usage(&format!("no fault kind {name:?}")),
                    }
                }
                kinds = Some(chosen);
            }
            "--planted" => match value() {
                Some(name) => env.push(("GOBLIN_PLANTED_DEFECT".to_string(), name)),
                None => return usage("--planted needs a defect's name"),
            },
            "--stop-on-violation" => stop_on_violation = true,
            "--no-namespaces" => no_namespaces = true,
            "--verbose" => verbose = true,
            other => return usage(&format!("unknown argument {other:?}")),
        }
    }
    // The servers start in directories of their own: the module by its absolute path.
    let module = match module.canonicalize() {
        Ok(module) => module,
        Err(_) => {
            return usage(&format!(
                "no module at {} (cargo build --release)",
                module.display()
            ))
        }
    };
    let seed = seed.unwrap_or_else(|| goblin_faults::history::wall_us() as u64 % 1_000_000);
    let mut failed = false;
    for flavor in servers {
        let config = Config {
            flavor,
            module: module.clone(),
            module_args: Vec::new(),
            env: env.clone(),
            seed,
            seconds,
            phase,
            until_ms,
            kinds: kinds.clone(),
            stop_on_violation,
            no_namespaces,
        };
        let results = campaign::run(&config);
        print!("{}", report::render(&config, &results, verbose));
        print!("{}", report::figures(&config, &results));
        if verbose {
            for result in &results {
                println!("  the {} phase's faults:", result.shape.name());
                for line in &result.fault_lines {
                    println!("    {line}");
                }
            }
        }
        failed |= results.iter().any(|r| !r.findings.is_empty());
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
