//! What a campaign prints: per server one line `faults <server>: <N> operations, <F> faults,
//! <V> violations`, then per violation its checker, seed and replay command, what it saw, and
//! the shortest prefix of the history that shows it; then the figures (faults by kind, the
//! over-admission measured, the fenced resource).

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::campaign::{Config, PhaseResult};
use crate::checks::STATEMENTS;

/// The command that replays a finding: the same server, module, seed and length, the phase it
/// was found in, stopped just after it showed.
pub fn replay_command(config: &Config, phase: &str, by_ms: u64) -> String {
    let mut command = format!(
        "make faults SERVERS={} SEED={} SECONDS={}",
        config.flavor.name(),
        config.seed,
        config.seconds
    );
    if config.module != default_module() {
        let _ = write!(command, " MODULE={}", config.module.display());
    }
    let mut args = format!(
        "--phase {phase} --until {:.1}",
        (by_ms as f64 / 1000.0) + 0.5
    );
    if let Some((_, planted)) = config
        .env
        .iter()
        .find(|(k, _)| k == "GOBLIN_PLANTED_DEFECT")
    {
        let _ = write!(args, " --planted {planted}");
    }
    if let Some(kinds) = &config.kinds {
        let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        // A campaign without a nemesis replays as one: an empty list is no argument at all.
        let list = if names.is_empty() {
            "none".to_string()
        } else {
            names.join(",")
        };
        let _ = write!(args, " --faults {list}");
    }
    if config.no_namespaces {
        args.push_str(" --no-namespaces");
    }
    let _ = write!(command, " FAULTS_ARGS='{args}'");
    command
}

pub fn default_module() -> std::path::PathBuf {
    goblin_testkit::repo_root().join("target/release/libgoblin.so")
}

/// Totals over a server's phases.
pub struct Totals {
    pub operations: usize,
    pub faults: usize,
    pub violations: usize,
}

pub fn totals(results: &[PhaseResult]) -> Totals {
    Totals {
        operations: results.iter().map(|r| r.operations).sum(),
        faults: results
            .iter()
            .map(|r| r.faults.values().sum::<usize>())
            .sum(),
        violations: results.iter().map(|r| r.findings.len()).sum(),
    }
}

pub fn render(config: &Config, results: &[PhaseResult], verbose: bool) -> String {
    let mut out = String::new();
    let totals = totals(results);
    let _ = writeln!(
        out,
        "faults {}: {} operations, {} faults, {} violations",
        config.flavor.name(),
        totals.operations,
        totals.faults,
        totals.violations
    );
    for result in results {
        // The same checker's findings, stated once each with its first showing in full.
        let mut shown: BTreeMap<&str, usize> = BTreeMap::new();
        for finding in &result.findings {
            let count = shown.entry(finding.violation.checker).or_default();
            *count += 1;
            let replay = replay_command(config, result.shape.name(), finding.by_ms);
            let _ = writeln!(
                out,
                "  {}: seed {}, {} phase, at {:.3} s: {}",
                finding.violation.checker,
                config.seed,
                result.shape.name(),
                finding.by_ms as f64 / 1000.0,
                finding.violation.message
            );
            let _ = writeln!(out, "    replay: {replay}");
            if *count == 1 || verbose {
                let statement = STATEMENTS
                    .iter()
                    .find(|(name, _)| *name == finding.violation.checker)
                    .map_or("", |(_, s)| s);
                let _ = writeln!(out, "    it checks: {statement}");
                let _ = writeln!(
                    out,
                    "    the shortest prefix that shows it: the history's first {} calls (to {:.3} s); on its keys:",
                    finding.prefix_of,
                    finding.by_ms as f64 / 1000.0
                );
                for line in &finding.prefix {
                    let _ = writeln!(out, "      {line}");
                }
            }
        }
    }
    out
}

/// The figures of a server's campaign, for the docs.
pub fn figures(config: &Config, results: &[PhaseResult]) -> String {
    let mut out = String::new();
    for result in results {
        let kinds: Vec<String> = result
            .faults
            .iter()
            .map(|(kind, n)| format!("{} {n}", kind.name()))
            .collect();
        let _ = writeln!(
            out,
            "  {} phase, {:.0} s: {} calls ({} answered, {} unknown), {} faults ({}), {} violations{}",
            result.shape.name(),
            result.seconds,
            result.operations,
            result.answered,
            result.unknown,
            result.faults.values().sum::<usize>(),
            kinds.join(", "),
            result.findings.len(),
            result
                .first_finding_s
                .map(|s| format!(", the first at {s:.1} s"))
                .unwrap_or_default()
        );
        let excess: Vec<String> = result
            .excess
            .by_cause
            .iter()
            .map(|(cause, n)| {
                format!(
                    "{cause}: {n} (at most {} in one window, {:.0}% of its quota)",
                    result.excess.worst.get(cause).copied().unwrap_or(0),
                    100.0 * result.excess.worst_share.get(cause).copied().unwrap_or(0.0)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "    limits: {} admitted; over the quota: {}",
            result.excess.admitted,
            if excess.is_empty() {
                "none".to_string()
            } else {
                excess.join("; ")
            }
        );
        let _ = writeln!(
            out,
            "    fenced resource: {} writes accepted, {} refused; {} made after the writer's lease was over, {} of them refused; \
             {} successors with a smaller token than one minted ahead of its server's clock (the most {} ms short)",
            result.resource.accepted,
            result.resource.refused,
            result.resource.stale,
            result.resource.stale_refused,
            result.resource.margin_inversions,
            result.resource.widest_inversion_ms
        );
        let _ = writeln!(
            out,
            "    split brain: {} pairs of lock holders on two primaries at once, the longest {} ms",
            result.split.pairs, result.split.longest_ms
        );
        for note in &result.notes {
            let _ = writeln!(out, "    {note}");
        }
    }
    let _ = config;
    out
}
