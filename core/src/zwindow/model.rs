//! A sorted set in memory, ordered as the server orders one (by score, then by member bytes):
//! the `SortedWindow` the unit tests and the fuzzer run ZWINDOW's algorithm on.

use std::collections::{BTreeSet, HashMap};

use super::{SortedWindow, SortedWindowMut, Zadded};

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

    /// Removes `member`, as ZREM does; whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        let Some(score) = self.scores.remove(member) else {
            return false;
        };
        self.by_score.remove(&(Score(score), member.to_vec()));
        true
    }

    /// A set holding `members`, for tests.
    #[cfg(test)]
    pub(crate) fn of(members: &[(&str, f64)]) -> ModelWindow {
        let mut set = ModelWindow::default();
        for (member, score) in members {
            set.add(*score, member.as_bytes());
        }
        set
    }
}

impl SortedWindow for ModelWindow {
    type Member = [u8];

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

    fn first_above<R>(&self, cutoff: f64, read: impl FnOnce(&[u8], f64) -> R) -> Option<R> {
        self.by_score
            .iter()
            .find(|(score, _)| score.0 > cutoff)
            .map(|(score, member)| read(member, score.0))
    }

    fn last<R>(&self, read: impl FnOnce(&[u8], f64) -> R) -> Option<R> {
        self.by_score
            .last()
            .map(|(score, member)| read(member, score.0))
    }
}

impl SortedWindowMut for ModelWindow {
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

    fn add(&mut self, score: f64, member: &[u8]) -> Zadded {
        match self.scores.insert(member.to_vec(), score) {
            None => {
                self.by_score.insert((Score(score), member.to_vec()));
                Zadded::Added
            }
            // As the server's zsetAdd: `score != curscore` moves, so 0.0 and -0.0 are the same
            // score and the member keeps the one it had.
            Some(old) if old == score => {
                self.scores.insert(member.to_vec(), old);
                Zadded::Unchanged
            }
            Some(old) => {
                self.by_score.remove(&(Score(old), member.to_vec()));
                self.by_score.insert((Score(score), member.to_vec()));
                Zadded::Moved
            }
        }
    }

    fn add_bytes(&mut self, score: f64, member: &[u8]) -> Zadded {
        self.add(score, member)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_order_the_same_partially_and_totally() {
        // PartialOrd must agree with Ord (std's contract for the pair).
        for (a, b) in [(1.0, 2.0), (2.0, 1.0), (1.5, 1.5), (-0.0, 0.0)] {
            let (a, b) = (Score(a), Score(b));
            assert_eq!(a.partial_cmp(&b), Some(a.cmp(&b)), "{a:?} {b:?}");
        }
        assert!(Score(1.0) < Score(2.0));
    }

    #[test]
    fn remove_lowest_removes_at_most_max() {
        let mut set = ModelWindow::of(&[("a", 1.0), ("b", 2.0), ("c", 3.0)]);
        assert_eq!(set.remove_lowest(10.0, 2), (2, 2.0));
        assert_eq!(set.members(), [(b"c".to_vec(), 3.0)]);
        assert_eq!(set.remove_lowest(10.0, 0), (0, f64::NEG_INFINITY));
        assert_eq!(set.cardinality(), 1);
    }

    #[test]
    fn count_above_leaves_out_the_cutoff_itself() {
        let set = ModelWindow::of(&[("a", 1.0), ("b", 2.0), ("c", 3.0)]);
        assert_eq!(set.count_above(2.0, 10), 1);
        assert_eq!(set.count_above(1.5, 10), 2);
        assert_eq!(set.count_above(0.0, 2), 2, "stops at the cap");
    }

    #[test]
    fn add_says_added_moved_or_unchanged_as_zadd_does() {
        let mut set = ModelWindow::default();
        assert_eq!(set.add(5.0, b"m"), Zadded::Added);
        assert_eq!(set.add(5.0, b"m"), Zadded::Unchanged);
        assert_eq!(set.add(6.0, b"m"), Zadded::Moved);
        assert_eq!(set.members(), [(b"m".to_vec(), 6.0)]);
        // ZADD z -0 m on a member at 0 changes nothing: the server compares with !=.
        assert_eq!(set.add(0.0, b"z"), Zadded::Added);
        assert_eq!(set.add(-0.0, b"z"), Zadded::Unchanged);
        assert!(set.score(b"z").is_some_and(|s| s.is_sign_positive()));
    }
}
