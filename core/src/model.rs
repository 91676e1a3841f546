//! A sorted set in memory, ordered as the server orders one (by score, then by member bytes):
//! the `SortedWindow` the unit tests and the fuzzer run ZWINDOW's algorithm on.

use std::collections::{BTreeSet, HashMap};

use crate::window::{SortedWindow, Zadded};

/// A score with a total order, so it can key a `BTreeSet`. Scores here are never NaN.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Score(f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[derive(Debug, Default, Clone)]
pub struct ModelWindow {
    by_score: BTreeSet<(Score, Vec<u8>)>,
    scores: HashMap<Vec<u8>, f64>,
}

impl ModelWindow {
    /// The members and scores, as ZRANGE WITHSCORES lists them.
    pub fn members(&self) -> Vec<(Vec<u8>, f64)> {
        self.by_score
            .iter()
            .map(|(score, member)| (member.clone(), score.0))
            .collect()
    }
}

impl SortedWindow for ModelWindow {
    type Member = [u8];

    fn remove_lowest(&mut self, upper: f64, max: usize) -> (usize, f64) {
        let mut removed = 0;
        let mut last = f64::NEG_INFINITY;
        while removed < max {
            let Some((score, _)) = self.by_score.first() else {
                break;
            };
            if score.0 > upper {
                break;
            }
            if let Some((score, member)) = self.by_score.pop_first() {
                self.scores.remove(&member);
                last = score.0;
                removed += 1;
            }
        }
        (removed, last)
    }

    fn lowest_score(&self) -> Option<f64> {
        self.by_score.first().map(|(score, _)| score.0)
    }

    fn cardinality(&self) -> usize {
        self.scores.len()
    }

    fn count_above(&self, cutoff: f64, cap: usize) -> usize {
        self.by_score
            .iter()
            .rev()
            .take_while(|(score, _)| score.0 > cutoff)
            .take(cap)
            .count()
    }

    fn score(&self, member: &[u8]) -> Option<f64> {
        self.scores.get(member).copied()
    }

    fn add(&mut self, score: f64, member: &[u8]) -> Zadded {
        match self.scores.insert(member.to_vec(), score) {
            None => {
                self.by_score.insert((Score(score), member.to_vec()));
                Zadded::Added
            }
            Some(old) if old.to_bits() == score.to_bits() => Zadded::Unchanged,
            Some(old) => {
                self.by_score.remove(&(Score(old), member.to_vec()));
                self.by_score.insert((Score(score), member.to_vec()));
                Zadded::Moved
            }
        }
    }
}
