//! GOBLIN.FWINDOW and GOBLIN.MFWINDOW: a fixed-window counter in milliseconds, what it becomes
//! and what happens to its TTL, and, with a limit, what a call over it does to the window:
//! start it again (`RESTART`), block for a while (`BLOCK`), or back off exponentially
//! (`BACKOFF`). GOBLIN.MFWINDOW decides several such windows at once, all or nothing.
//!
//! The counter is the plain decimal string INCRBY keeps; its window is armed when the key is
//! new, or has no TTL (a counter set without one), and is otherwise left running: a fixed
//! window. No server here: the module reads the key, asks this module, and writes what it says
//! (`increx::CounterPlan`, as GOBLIN.INCREX's counter is written).
//!
//! A window is half-open on the server's clock: armed at `start`, it counts calls in
//! `[start, start + window)` and has ended at `start + window`, the millisecond its key expires.
//! The server still holds a key in that millisecond (it drops one only once its clock is past
//! the expiry, though `EXPIRE` and `SET` take an expiry of now as already past); here a key
//! whose expiry is now, or before, is a window that has ended (`ended`): a call starts a new
//! one, counting from 0, and a read finds none.

use crate::increx::{CounterError, CounterPlan, CounterTtl};

/// The longest window `BACKOFF` arms, in milliseconds: 2^53 - 1, as @fastify/rate-limit caps
/// its own (JavaScript's largest exact integer).
pub const BACKOFF_CAP_MS: i64 = (1 << 53) - 1;

/// What a call that leaves the count above the limit does to the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// Nothing: the window runs on (the count tells the caller).
    Count,
    /// The window starts again, its whole length from now, on every call above the limit.
    Restart,
    /// The call that crosses the limit sets the TTL to these milliseconds from now; the calls
    /// after it leave it.
    Block(i64),
    /// Every call above the limit sets the TTL to `window * 2^(count - limit - 1)` from now,
    /// at most `BACKOFF_CAP_MS`.
    Backoff,
}

/// One call: the window in milliseconds (0: none, the counter never expires), what it adds,
/// and its limit, if any, with what a call over it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    pub window_ms: i64,
    pub by: i64,
    pub limit: Option<(i64, Over)>,
}

/// The counter as it stands: its value, and the milliseconds from now until its key expires
/// (`None`: no TTL; 0 or less: its window has ended, see `ended`). `None` for a missing key.
pub type Standing = Option<(i64, Option<i64>)>;

/// Whether the key holds a window that has ended: it expires in this very millisecond, or
/// before (a key the server has not dropped yet). The caller drops such a key, as the server
/// drops an expired one, before it writes what the decision says.
pub fn ended(standing: Standing) -> bool {
    matches!(standing, Some((_, Some(left_ms))) if left_ms <= 0)
}

/// The counter as the decisions see it: a window that has ended is no window.
pub fn live(standing: Standing) -> Standing {
    standing.filter(|_| !ended(standing))
}

/// What a call does: the counter written as GOBLIN.INCREX writes one, and the reply, the count
/// and the milliseconds until the key expires (-1: it does not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub write: CounterPlan,
    pub ttl_ms: i64,
}

impl Outcome {
    /// `[count, ttl_ms]`.
    pub fn reply(&self) -> [i64; 2] {
        [self.write.value, self.ttl_ms]
    }
}

/// Decides one call at `now_ms`. Fails without side effects, so the caller writes nothing. A
/// window that has ended (`ended`) counts as none: the call starts a new one.
pub fn hit(standing: Standing, hit: &Hit, now_ms: i64) -> Result<Outcome, CounterError> {
    let standing = live(standing);
    let before = standing.map_or(0, |(value, _)| value);
    let value = before
        .checked_add(hit.by)
        .ok_or(CounterError::IncrementOverflow)?;
    let left_ms = standing.and_then(|(_, left)| left);
    // A new window when the key is new or has none; a running one is left as it is.
    let mut armed_for = (left_ms.is_none() && hit.window_ms > 0).then_some(hit.window_ms);
    if let Some((limit, over)) = hit.limit.filter(|(limit, _)| value > *limit) {
        match over {
            Over::Count => {}
            Over::Restart if hit.window_ms > 0 => armed_for = Some(hit.window_ms),
            Over::Restart => {}
            Over::Block(ms) if before <= limit => armed_for = Some(ms),
            Over::Block(_) => {}
            Over::Backoff if hit.window_ms > 0 => {
                armed_for = Some(backoff_ms(hit.window_ms, value - limit - 1));
            }
            Over::Backoff => {}
        }
    }
    let (ttl, ttl_ms) = match armed_for {
        None => (CounterTtl::Keep, left_ms.unwrap_or(-1)),
        Some(ms) => {
            let at = now_ms.checked_add(ms).ok_or(CounterError::ExpireOverflow)?;
            (CounterTtl::ArmAt(at), ms)
        }
    };
    Ok(Outcome {
        write: CounterPlan {
            value,
            by: hit.by,
            ttl,
        },
        ttl_ms,
    })
}

/// `window_ms * 2^exponent`, at most `BACKOFF_CAP_MS`.
fn backoff_ms(window_ms: i64, exponent: i64) -> i64 {
    u32::try_from(exponent)
        .ok()
        .and_then(|exponent| 1i64.checked_shl(exponent).filter(|_| exponent < 63))
        .and_then(|factor| window_ms.checked_mul(factor))
        .map_or(BACKOFF_CAP_MS, |ms| ms.min(BACKOFF_CAP_MS))
}

/// One window of a GOBLIN.MFWINDOW call: the key (an index into the call's distinct keys),
/// its window in milliseconds and its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    pub key: usize,
    pub window_ms: i64,
    pub limit: i64,
}

/// What GOBLIN.MFWINDOW decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Several {
    /// Whether a window refused: then nothing is written.
    pub refused: bool,
    /// The milliseconds until the refusing windows all allow the call again (the longest of
    /// their TTLs), or -1: allowed, or a refusing window never will (it has no TTL, or the
    /// call adds more than its limit).
    pub retry_after_ms: i64,
    /// Each group's `[count, ttl_ms]`: after the call when allowed, as they stand when refused.
    pub groups: Vec<[i64; 2]>,
    /// What to write for each distinct key (empty when refused).
    pub writes: Vec<(usize, CounterPlan)>,
}

/// Decides a GOBLIN.MFWINDOW call: every group counts `by` on its key, as GOBLIN.FWINDOW
/// without options would, in order (a key named twice sees the first group's count), and the
/// call is allowed only if no count goes above its group's limit. A window that has ended
/// (`ended`) counts as none: allowed, the call starts a new one; refused, it stands as a
/// missing key.
pub fn several(
    standing: &[Standing],
    groups: &[Group],
    by: i64,
    now_ms: i64,
) -> Result<Several, CounterError> {
    let mut keys: Vec<Standing> = standing.iter().copied().map(live).collect();
    // Each key's write: its last count, what all its groups added, its TTL if one armed it.
    let mut writes: Vec<Option<CounterPlan>> = vec![None; standing.len()];
    let mut after = Vec::with_capacity(groups.len());
    // Each refusing group's TTL, or `None` where it never resets.
    let mut refusals = Vec::new();
    for group in groups {
        let Some(current) = keys.get(group.key).copied() else {
            continue;
        };
        let hit = Hit {
            window_ms: group.window_ms,
            by,
            limit: None,
        };
        let outcome = self::hit(current, &hit, now_ms)?;
        if outcome.write.value > group.limit {
            let resets = current
                .and_then(|(_, left)| left)
                .filter(|_| by <= group.limit);
            refusals.push(resets);
        }
        let write = writes[group.key].get_or_insert(CounterPlan {
            value: 0,
            by: 0,
            ttl: CounterTtl::Keep,
        });
        write.value = outcome.write.value;
        write.by = write
            .by
            .checked_add(by)
            .ok_or(CounterError::IncrementOverflow)?;
        if let CounterTtl::ArmAt(at) = outcome.write.ttl {
            write.ttl = CounterTtl::ArmAt(at);
        }
        keys[group.key] = Some((
            outcome.write.value,
            (outcome.ttl_ms >= 0).then_some(outcome.ttl_ms),
        ));
        after.push(outcome.reply());
    }
    if refusals.is_empty() {
        let writes = writes
            .into_iter()
            .enumerate()
            .filter_map(|(key, write)| write.map(|write| (key, write)))
            .collect();
        return Ok(Several {
            refused: false,
            retry_after_ms: -1,
            groups: after,
            writes,
        });
    }
    let retry_after_ms = if refusals.iter().any(Option::is_none) {
        -1
    } else {
        refusals.into_iter().flatten().max().unwrap_or(-1)
    };
    let groups = groups
        .iter()
        .map(
            |group| match standing.get(group.key).copied().and_then(live) {
                Some((value, left)) => [value, left.unwrap_or(-1)],
                None => [0, -2],
            },
        )
        .collect();
    Ok(Several {
        refused: true,
        retry_after_ms,
        groups,
        writes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    fn call(standing: Standing, window_ms: i64, by: i64, limit: Option<(i64, Over)>) -> Outcome {
        hit(
            standing,
            &Hit {
                window_ms,
                by,
                limit,
            },
            NOW,
        )
        .expect("no overflow")
    }

    #[test]
    fn the_first_hit_arms_the_window_and_later_ones_leave_it() {
        let first = call(None, 1500, 1, None);
        assert_eq!(first.reply(), [1, 1500]);
        assert_eq!(first.write.ttl, CounterTtl::ArmAt(NOW + 1500));
        let later = call(Some((1, Some(1200))), 1500, 1, None);
        assert_eq!(later.reply(), [2, 1200]);
        assert_eq!(later.write.ttl, CounterTtl::Keep);
    }

    #[test]
    fn a_window_ends_in_the_millisecond_its_key_expires() {
        // Its last millisecond is the one before: there the call counts in it.
        let last = call(Some((7, Some(1))), 1500, 1, None);
        assert_eq!(last.reply(), [8, 1]);
        assert_eq!(last.write.ttl, CounterTtl::Keep);
        // Expiring now, or before (a key the server has not dropped yet): a new window, from 0.
        for left in [0, -1, -250] {
            let anew = call(Some((7, Some(left))), 1500, 2, None);
            assert_eq!(anew.reply(), [2, 1500], "{left} ms left");
            assert_eq!(anew.write.ttl, CounterTtl::ArmAt(NOW + 1500));
            assert_eq!((anew.write.value, anew.write.by), (2, 2));
        }
        // Without a window the new counter has no TTL; above a limit as any first call is.
        let forever = call(Some((7, Some(0))), 0, 3, None);
        assert_eq!(forever.reply(), [3, -1]);
        assert_eq!(forever.write.ttl, CounterTtl::Keep);
        let blocked = call(Some((7, Some(0))), 1500, 5, Some((3, Over::Block(60_000))));
        assert_eq!(blocked.reply(), [5, 60_000], "crossing the limit from 0");
        assert_eq!(
            call(Some((7, Some(0))), 1500, 1, Some((3, Over::Block(60_000)))).reply(),
            [1, 1500],
            "the old count is gone"
        );
        // No overflow from a count that ended.
        assert_eq!(
            call(Some((i64::MAX, Some(0))), 1500, 1, None).reply(),
            [1, 1500]
        );
    }

    #[test]
    fn ended_is_an_expiry_now_or_before() {
        assert!(ended(Some((1, Some(0)))));
        assert!(ended(Some((1, Some(-1)))));
        assert!(!ended(Some((1, Some(1)))));
        assert!(!ended(Some((1, None))));
        assert!(!ended(None));
        assert_eq!(live(Some((1, Some(0)))), None);
        assert_eq!(live(Some((1, Some(1)))), Some((1, Some(1))));
        assert_eq!(live(Some((1, None))), Some((1, None)));
    }

    #[test]
    fn a_counter_without_a_ttl_gets_one() {
        assert_eq!(call(Some((5, None)), 1000, 1, None).reply(), [6, 1000]);
    }

    #[test]
    fn a_window_of_zero_never_expires() {
        let outcome = call(None, 0, 3, None);
        assert_eq!(outcome.reply(), [3, -1]);
        assert_eq!(outcome.write.ttl, CounterTtl::Keep);
        assert_eq!(call(Some((3, None)), 0, 1, None).reply(), [4, -1]);
    }

    #[test]
    fn rewards_and_penalties_move_the_count_not_the_window() {
        assert_eq!(call(Some((4, Some(900))), 1000, -3, None).reply(), [1, 900]);
        assert_eq!(call(Some((4, Some(900))), 1000, 5, None).reply(), [9, 900]);
        assert_eq!(
            call(None, 1000, -2, None).reply(),
            [-2, 1000],
            "a new window all the same"
        );
    }

    #[test]
    fn below_the_limit_nothing_is_re_armed() {
        for over in [Over::Restart, Over::Block(5000), Over::Backoff, Over::Count] {
            assert_eq!(
                call(Some((2, Some(700))), 1000, 1, Some((3, over))).reply(),
                [3, 700]
            );
        }
    }

    #[test]
    fn restart_re_arms_the_whole_window_on_every_call_above_the_limit() {
        let over = Some((3, Over::Restart));
        assert_eq!(call(Some((3, Some(100))), 1000, 1, over).reply(), [4, 1000]);
        assert_eq!(call(Some((4, Some(100))), 1000, 1, over).reply(), [5, 1000]);
    }

    #[test]
    fn block_re_arms_only_on_the_call_that_crosses_the_limit() {
        let over = Some((3, Over::Block(60_000)));
        let crossing = call(Some((3, Some(100))), 1000, 1, over);
        assert_eq!(crossing.reply(), [4, 60_000]);
        assert_eq!(crossing.write.ttl, CounterTtl::ArmAt(NOW + 60_000));
        assert_eq!(
            call(Some((4, Some(59_000))), 1000, 1, over).reply(),
            [5, 59_000]
        );
        // A call that jumps over the limit in one go crosses it too.
        assert_eq!(
            call(Some((1, Some(100))), 1000, 10, over).reply(),
            [11, 60_000]
        );
        assert_eq!(call(None, 1000, 10, over).reply(), [10, 60_000]);
    }

    #[test]
    fn backoff_doubles_the_window_with_each_call_above_the_limit() {
        let over = Some((3, Over::Backoff));
        assert_eq!(call(Some((3, Some(100))), 1000, 1, over).reply(), [4, 1000]);
        assert_eq!(call(Some((4, Some(100))), 1000, 1, over).reply(), [5, 2000]);
        assert_eq!(call(Some((5, Some(100))), 1000, 1, over).reply(), [6, 4000]);
        assert_eq!(
            call(Some((60, Some(100))), 1000, 1, over).reply(),
            [61, BACKOFF_CAP_MS]
        );
        assert_eq!(
            call(
                Some((i64::MAX - 1, Some(1))),
                1000,
                1,
                Some((0, Over::Backoff))
            )
            .reply()[1],
            BACKOFF_CAP_MS
        );
        assert_eq!(backoff_ms(1, 52), 1 << 52);
        assert_eq!(backoff_ms(1, 53), BACKOFF_CAP_MS);
        assert_eq!(backoff_ms(3, 62), BACKOFF_CAP_MS);
    }

    #[test]
    fn overflows_write_nothing() {
        let overflow = |standing, by, window_ms| {
            hit(
                standing,
                &Hit {
                    window_ms,
                    by,
                    limit: None,
                },
                NOW,
            )
        };
        assert_eq!(
            overflow(Some((i64::MAX, Some(5))), 1, 10),
            Err(CounterError::IncrementOverflow)
        );
        assert_eq!(
            overflow(Some((i64::MIN, Some(5))), -1, 10),
            Err(CounterError::IncrementOverflow)
        );
        assert_eq!(
            overflow(None, 1, i64::MAX),
            Err(CounterError::ExpireOverflow)
        );
    }

    fn groups(limits: &[(usize, i64)]) -> Vec<Group> {
        limits
            .iter()
            .map(|&(key, limit)| Group {
                key,
                window_ms: 1000,
                limit,
            })
            .collect()
    }

    #[test]
    fn several_windows_count_together_or_not_at_all() {
        let standing = [Some((4, Some(300))), None];
        let allowed = several(&standing, &groups(&[(0, 10), (1, 100)]), 1, NOW).unwrap();
        assert!(!allowed.refused);
        assert_eq!(allowed.retry_after_ms, -1);
        assert_eq!(allowed.groups, [[5, 300], [1, 1000]]);
        assert_eq!(allowed.writes.len(), 2);
        let refused = several(&standing, &groups(&[(0, 4), (1, 100)]), 1, NOW).unwrap();
        assert!(refused.refused);
        assert_eq!(refused.retry_after_ms, 300);
        assert_eq!(refused.groups, [[4, 300], [0, -2]], "as they stand");
        assert!(refused.writes.is_empty());
    }

    #[test]
    fn a_refusal_that_never_resets_says_minus_one() {
        let no_ttl = [Some((9, None))];
        assert_eq!(
            several(&no_ttl, &groups(&[(0, 9)]), 1, NOW)
                .unwrap()
                .retry_after_ms,
            -1
        );
        let dearer = [Some((0, Some(500)))];
        assert_eq!(
            several(&dearer, &groups(&[(0, 2)]), 3, NOW)
                .unwrap()
                .retry_after_ms,
            -1
        );
        let longest = [Some((5, Some(100))), Some((5, Some(700)))];
        assert_eq!(
            several(&longest, &groups(&[(0, 5), (1, 5)]), 1, NOW)
                .unwrap()
                .retry_after_ms,
            700
        );
    }

    #[test]
    fn several_windows_that_ended_start_anew_or_stand_as_missing() {
        let standing = [Some((9, Some(0))), Some((3, Some(500)))];
        let allowed = several(&standing, &groups(&[(0, 9), (1, 5)]), 1, NOW).unwrap();
        assert!(!allowed.refused, "the ended window's 9 is gone");
        assert_eq!(allowed.groups, [[1, 1000], [4, 500]]);
        assert_eq!(
            allowed.writes[0],
            (
                0,
                CounterPlan {
                    value: 1,
                    by: 1,
                    ttl: CounterTtl::ArmAt(NOW + 1000)
                }
            )
        );
        let refused = several(&standing, &groups(&[(0, 9), (1, 3)]), 1, NOW).unwrap();
        assert!(refused.refused);
        assert_eq!(refused.retry_after_ms, 500);
        assert_eq!(refused.groups, [[0, -2], [3, 500]], "as they stand");
        let ended_refuses = several(&[Some((0, Some(-1)))], &groups(&[(0, 1)]), 2, NOW).unwrap();
        assert_eq!(
            (ended_refuses.refused, ended_refuses.retry_after_ms),
            (true, -1),
            "n above the limit never resets, ended or not"
        );
        assert_eq!(ended_refuses.groups, [[0, -2]]);
    }

    #[test]
    fn a_key_named_twice_sees_its_own_count() {
        let standing = [None];
        let both = several(&standing, &groups(&[(0, 5), (0, 5)]), 2, NOW).unwrap();
        assert_eq!(both.groups, [[2, 1000], [4, 1000]]);
        assert_eq!(
            both.writes,
            [(
                0,
                CounterPlan {
                    value: 4,
                    by: 4,
                    ttl: CounterTtl::ArmAt(NOW + 1000)
                }
            )]
        );
        assert!(
            several(&standing, &groups(&[(0, 5), (0, 3)]), 2, NOW)
                .unwrap()
                .refused
        );
    }
}
