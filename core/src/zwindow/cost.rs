//! GOBLIN.ZWINDOW with `COST n`: a request takes `n` units of the limit, all or nothing, and is
//! still one member of the sorted set, so a call's time and memory do not grow with `n`.
//!
//! Each admitted request is one entry, whose member records the running total of units admitted
//! into the key, its own cost and the caller's member:
//!
//! ```text
//! <running total, 20 digits>:<cost>:<member>      00000000000000000150:100:req-7
//! ```
//!
//! Entries are stored at strictly increasing scores (a request at or before the newest entry's
//! time goes just after it, one ulp later), so the set's order by score is the order of the
//! running totals. The units inside the window are then the newest entry's total, less the
//! oldest inside entry's total, plus that entry's own cost: two O(log N) reads, whatever the
//! costs. Totals count modulo 2^64; a window never holds more than `limit` (< 2^63) units, so
//! the difference is exact. Eviction is ZWINDOW's own, by score.

use super::{SortedWindow, SortedWindowMut, Zadded};

/// What a COST entry's member says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CostEntry {
    /// Units admitted into the key up to and including this entry, modulo 2^64.
    pub total: u64,
    /// This entry's cost.
    pub cost: u64,
}

/// The width of the running total in a member: `u64::MAX` has 20 digits.
const TOTAL_DIGITS: usize = 20;

/// The member of a COST entry.
pub fn entry_member(entry: CostEntry, member: &[u8]) -> Vec<u8> {
    let mut bytes = format!("{:020}:{}:", entry.total, entry.cost).into_bytes();
    bytes.extend_from_slice(member);
    bytes
}

/// The entry a member records, if it is a COST entry's.
pub fn parse_entry(member: &[u8]) -> Option<CostEntry> {
    let total = member.get(..TOTAL_DIGITS)?;
    let rest = member.get(TOTAL_DIGITS..)?.strip_prefix(b":")?;
    let cost_len = rest.iter().position(|&byte| byte == b':')?;
    let digits = |text: &[u8]| -> Option<u64> {
        if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(text).ok()?.parse().ok()
    };
    Some(CostEntry {
        total: digits(total)?,
        cost: digits(&rest[..cost_len])?,
    })
}

/// A member above the cutoff that is not a COST entry's: the key holds a window written
/// without `COST`, whose units cannot be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotCostEntries;

/// What the members scored above a cutoff hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// The sum of their costs.
    pub units: u64,
    /// The lowest of their scores (`None`: no member above the cutoff).
    pub oldest: Option<f64>,
    /// The running total of the newest entry inside the window (`None`: none inside).
    pub total: Option<u64>,
    /// The highest score of the whole set: a new entry goes after it.
    pub newest: Option<f64>,
}

/// The units inside the window (the members scored above `cutoff`). Reads only: eviction,
/// which removes members at or below the cutoff, changes none of it.
pub fn usage<W: SortedWindow>(set: &W, cutoff: f64) -> Result<Usage, NotCostEntries> {
    let entry = |member: &[u8], score: f64| (parse_entry(member), score);
    let Some((last, newest)) = set.last(entry) else {
        return Ok(Usage {
            units: 0,
            oldest: None,
            total: None,
            newest: None,
        });
    };
    let newest = Some(newest);
    let Some((first, oldest)) = set.first_above(cutoff, entry) else {
        // Nothing inside: what is left is old, whatever it holds.
        return Ok(Usage {
            units: 0,
            oldest: None,
            total: None,
            newest,
        });
    };
    let (first, last) = (first.ok_or(NotCostEntries)?, last.ok_or(NotCostEntries)?);
    Ok(Usage {
        units: last
            .total
            .wrapping_sub(first.total)
            .wrapping_add(first.cost),
        oldest: Some(oldest),
        total: Some(last.total),
        newest,
    })
}

/// Where the next entry goes: at `now`, or just after the newest entry if `now` is not later
/// (a caller's clock behind another's, or two requests in one millisecond).
pub fn next_score(now: f64, newest: Option<f64>) -> f64 {
    match newest {
        Some(score) if now <= score => score.next_up(),
        _ => now,
    }
}

/// What a COST request got.
#[derive(Debug, Clone, PartialEq)]
pub enum CostAdmission {
    /// Recorded as `member` at `score`.
    Admitted { score: f64, member: Vec<u8> },
    /// Over the limit: nothing added.
    Rejected,
}

/// Whether a request of `cost` units fits: the units inside the window plus `cost`, at most
/// `limit`.
pub fn fits(units: u64, cost: u64, limit: i64) -> bool {
    u128::from(units) + u128::from(cost) <= u128::try_from(limit).unwrap_or(0)
}

/// The entry a request of `cost` units at `now` is recorded as, given the `usage` read before
/// eviction: its score and member (one entry for the whole cost), or `None` when it does not
/// fit. Reads nothing: the caller records it (the module through its effects, `admit` on a
/// set of its own).
pub fn entry(
    usage: &Usage,
    limit: i64,
    now: f64,
    cost: u64,
    member: &[u8],
) -> Option<(f64, Vec<u8>)> {
    if !fits(usage.units, cost, limit) {
        return None;
    }
    // A window with nothing inside starts its running total afresh.
    let total = usage.total.map_or(cost, |total| total.wrapping_add(cost));
    let score = next_score(now, usage.newest);
    Some((score, entry_member(CostEntry { total, cost }, member)))
}

/// The whole admission on a set the caller owns (the model, the fuzzer): `entry`, then the
/// entry added.
pub fn admit<W: SortedWindowMut>(
    set: &mut W,
    usage: &Usage,
    limit: i64,
    now: f64,
    cost: u64,
    member: &[u8],
) -> CostAdmission {
    let Some((score, member)) = entry(usage, limit, now, cost, member) else {
        return CostAdmission::Rejected;
    };
    let zadded = set.add_bytes(score, &member);
    debug_assert_eq!(zadded, Zadded::Added, "every entry's member is new");
    CostAdmission::Admitted { score, member }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zwindow::model::ModelWindow;
    use crate::zwindow::{cutoff, evict};

    #[test]
    fn a_member_records_the_running_total_and_the_cost() {
        let entry = CostEntry {
            total: 150,
            cost: 100,
        };
        let member = entry_member(entry, b"req-7");
        assert_eq!(member, b"00000000000000000150:100:req-7");
        assert_eq!(parse_entry(&member), Some(entry));
        let largest = CostEntry {
            total: u64::MAX,
            cost: u64::MAX,
        };
        assert_eq!(parse_entry(&entry_member(largest, b"")), Some(largest));
        assert_eq!(parse_entry(&entry_member(entry, b"a:b")), Some(entry));
    }

    #[test]
    fn other_members_are_not_entries() {
        for member in [
            &b"req-7"[..],
            b"",
            b"0000000000000000015:100:x",
            b"00000000000000000150:x:y",
            b"00000000000000000150::y",
            b"00000000000000000150:100",
            b"0000000000000000015a:1:",
            b"99999999999999999999:1:",
        ] {
            assert_eq!(parse_entry(member), None, "{member:?}");
        }
    }

    /// Runs one COST call as the command does: usage before eviction, eviction, admission.
    fn call(set: &mut ModelWindow, now: f64, window: f64, limit: i64, cost: u64) -> bool {
        let cutoff = cutoff(now, window);
        let usage = usage(set, cutoff).expect("COST entries");
        evict(set, cutoff);
        matches!(
            admit(set, &usage, limit, now, cost, b""),
            CostAdmission::Admitted { .. }
        )
    }

    #[test]
    fn units_fill_the_window_all_or_nothing() {
        // 10 units in any 2 s.
        let mut set = ModelWindow::default();
        assert!(call(&mut set, 100.0, 2.0, 10, 5));
        assert!(call(&mut set, 100.5, 2.0, 10, 4));
        assert!(!call(&mut set, 101.0, 2.0, 10, 2), "9 + 2 > 10");
        assert!(call(&mut set, 101.0, 2.0, 10, 1));
        assert!(!call(&mut set, 101.9, 2.0, 10, 1));
        // At 102.0 the first entry (100.0) is at the cutoff: out. 5 + 1 = 6 units left.
        assert!(call(&mut set, 102.0, 2.0, 10, 5));
        assert_eq!(set.cardinality(), 3, "one entry per request");
        assert_eq!(usage(&set, cutoff(102.0, 2.0)).unwrap().units, 10);
    }

    #[test]
    fn a_huge_cost_is_one_entry() {
        let mut set = ModelWindow::default();
        assert!(call(&mut set, 1.0, 2.0, 1_000_000, 1));
        assert!(call(&mut set, 2.0, 2.0, 1_000_000, 999_999));
        assert_eq!(set.cardinality(), 2);
        assert!(!call(&mut set, 2.5, 2.0, 1_000_000, 1));
        assert!(
            call(&mut set, 3.5, 2.0, 1_000_000, 1),
            "the first unit left at 3.0"
        );
    }

    #[test]
    fn a_cost_above_the_limit_never_fits() {
        assert!(!fits(0, 11, 10));
        assert!(fits(0, 10, 10));
        assert!(!fits(0, 1, 0));
        assert!(!fits(0, 1, -5));
        let half = i64::MAX as u64 / 2;
        assert!(fits(half, half + 1, i64::MAX), "exactly the largest limit");
        assert!(!fits(half + 1, half + 1, i64::MAX));
        assert!(!fits(u64::MAX, 1, i64::MAX));
    }

    #[test]
    fn entries_go_after_the_newest_when_the_clock_is_behind() {
        let mut set = ModelWindow::default();
        assert!(call(&mut set, 100.0, 10.0, 10, 1));
        assert!(call(&mut set, 100.0, 10.0, 10, 1), "the same millisecond");
        assert!(call(&mut set, 99.0, 10.0, 10, 1), "a clock behind");
        let scores: Vec<f64> = set.members().iter().map(|(_, score)| *score).collect();
        assert_eq!(scores[0], 100.0);
        assert_eq!(scores[1], 100.0f64.next_up());
        assert_eq!(scores[2], 100.0f64.next_up().next_up());
        assert_eq!(usage(&set, cutoff(100.0, 10.0)).unwrap().units, 3);
    }

    #[test]
    fn a_window_emptied_starts_its_total_afresh() {
        let mut set = ModelWindow::default();
        assert!(call(&mut set, 100.0, 1.0, 10, 7));
        assert!(call(&mut set, 200.0, 1.0, 10, 3));
        assert_eq!(
            set.members()
                .iter()
                .map(|(member, _)| parse_entry(member).unwrap())
                .collect::<Vec<_>>(),
            [CostEntry { total: 3, cost: 3 }]
        );
    }

    #[test]
    fn running_totals_wrap_and_stay_exact() {
        let mut set = ModelWindow::default();
        let near = CostEntry {
            total: u64::MAX - 2,
            cost: 5,
        };
        set.add_bytes(10.0, &entry_member(near, b""));
        assert!(call(&mut set, 10.5, 10.0, 100, 10));
        let usage = usage(&set, cutoff(10.5, 10.0)).unwrap();
        assert_eq!(usage.units, 15);
        assert_eq!(usage.total, Some(7), "u64::MAX - 2 + 10, modulo 2^64");
    }

    #[test]
    fn a_window_written_without_cost_is_refused() {
        let mut set = ModelWindow::of(&[("plain", 100.0)]);
        assert_eq!(usage(&set, 50.0), Err(NotCostEntries));
        // Once the plain member has left the window, it no longer counts, evicted or not.
        assert_eq!(usage(&set, 100.0).map(|u| u.units), Ok(0));
        set.add_bytes(200.0, &entry_member(CostEntry { total: 1, cost: 1 }, b""));
        assert_eq!(usage(&set, 150.0).map(|u| u.units), Ok(1));
        assert_eq!(usage(&set, 50.0), Err(NotCostEntries));
    }

    /// A tiny generator, so the property below runs without a dependency.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    #[test]
    fn the_units_are_the_sum_of_the_costs_inside_the_window() {
        // Against the plainest model: a list of (time, cost), summed over what is inside.
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200 {
            let mut set = ModelWindow::default();
            let mut log: Vec<(f64, u64)> = Vec::new();
            let (window, limit) = (1.0 + rng.below(5) as f64, 1 + rng.below(50) as i64);
            let mut now = 1000.0;
            for _ in 0..100 {
                now += rng.below(1500) as f64 / 1000.0;
                let cost = 1 + rng.below(12);
                let cutoff = cutoff(now, window);
                let inside: u64 = log
                    .iter()
                    .filter(|(t, _)| *t > cutoff)
                    .map(|(_, c)| c)
                    .sum();
                let expected = inside + cost <= limit as u64;
                assert_eq!(usage(&set, cutoff).unwrap().units, inside);
                assert_eq!(call(&mut set, now, window, limit, cost), expected);
                if expected {
                    log.push((now, cost));
                }
            }
        }
    }
}
