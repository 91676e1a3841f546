//! The fault campaign inside `make test`: a short seeded campaign on every server must find
//! nothing, and the campaign must catch each defect the module's test build can plant (a
//! campaign that finds nothing proves something only if it can fail). `make faults` runs the
//! long one (docs/testing.md).

use goblin_faults::campaign::{self, Config, PhaseResult};
use goblin_faults::report;
use goblin_faults::topology::Shape;
use goblin_testkit::{on_every_server, Flavor};

/// How long the short campaign runs on each server, in seconds.
const SHORT_SECONDS: u64 = 25;

fn config(flavor: Flavor, module: std::path::PathBuf, seed: u64, seconds: u64) -> Config {
    Config {
        flavor,
        module,
        module_args: Vec::new(),
        env: Vec::new(),
        seed,
        seconds,
        phase: Some(Shape::Sentinel),
        until_ms: None,
        kinds: None,
        stop_on_violation: false,
        no_namespaces: false,
    }
}

fn shown(config: &Config, results: &[PhaseResult]) -> String {
    format!(
        "{}{}",
        report::render(config, results, false),
        report::figures(config, results)
    )
}

on_every_server! {
    fn a_short_seeded_campaign_finds_nothing(flavor: Flavor) {
        // One seed per server, so that the four runs between them cover more schedules.
        let seed = 4500 + Flavor::ALL.iter().position(|f| *f == flavor).unwrap_or(0) as u64;
        let config = config(flavor, goblin_testkit::module_path(), seed, SHORT_SECONDS);
        let results = campaign::run(&config);
        let text = shown(&config, &results);
        let totals = report::totals(&results);
        assert!(totals.operations > 100, "the campaign hardly ran:\n{text}");
        assert!(totals.faults > 5, "the nemesis hardly struck:\n{text}");
        assert_eq!(totals.violations, 0, "the campaign found:\n{text}");
    }
}

/// A defect planted in the test build, and the checkers that must catch it: a short campaign
/// without a nemesis (so nothing but the defect can show), stopped at its first finding.
/// (`defect`: its name in core/src/planted.rs.)
fn caught(defect: &str, checkers: &[&str]) {
    let mut config = config(Flavor::Redis82, goblin_testkit::test_build_path(), 4600, 40);
    config.env = vec![("GOBLIN_PLANTED_DEFECT".into(), defect.into())];
    config.kinds = Some(Vec::new());
    config.stop_on_violation = true;
    let results = campaign::run(&config);
    let text = shown(&config, &results);
    let findings: Vec<&str> = results
        .iter()
        .flat_map(|r| r.findings.iter().map(|f| f.violation.checker))
        .collect();
    assert!(
        findings.iter().any(|checker| checkers.contains(checker)),
        "{} was planted and the campaign did not catch it ({checkers:?} found nothing):\n{text}",
        defect
    );
    assert!(
        findings
            .iter()
            .all(|checker| checkers.contains(checker) || ["exclusion", "quota"].contains(checker)),
        "{}: findings of other checkers than {checkers:?}:\n{text}",
        defect
    );
}

#[test]
fn a_line_that_serves_the_last_first_is_caught() {
    caught("last-come-first", &["fifo"]);
}

#[test]
fn an_extend_that_ignores_its_owner_is_caught() {
    caught("extend-ignores-owner", &["model", "exclusion"]);
}

#[test]
fn a_fixed_window_that_admits_one_more_is_caught() {
    caught("window-admits-one-more", &["model", "quota"]);
}

#[test]
fn a_waiter_forgotten_on_a_timeout_is_caught() {
    caught("forgets-waiter-on-timeout", &["fifo"]);
}
