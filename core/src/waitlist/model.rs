//! A line served on the in-memory sorted set (`zwindow::model::ModelWindow`), and the plan
//! checked against the plainest reading of the rule: each waiter, in the order it came, as its
//! own GOBLIN.ZWINDOW call on the window as the grants before it left it. The unit tests and the
//! fuzzer run it.

use super::plan::{self, KeyNow, Plan};
use super::{LineId, State, WaitLists, WaiterId, Want};
use crate::clock::seconds_of;
use crate::zwindow::model::ModelWindow;
use crate::zwindow::{self, Room, SortedWindow, SortedWindowMut};

/// One lease waiter to put in line: its member (not in the set), window, limit and permits.
#[derive(Debug, Clone)]
pub struct LeaseWaiter {
    pub member: Vec<u8>,
    pub window: f64,
    pub limit: i64,
    pub permits: usize,
}

/// Serves a line of `waiters` (every one of which `can_be_granted`) on `set` at `now_ms`, as
/// the module does: the line's eviction, the rooms, the plan; then checks the plan. Panics with
/// what differs.
pub fn serve_and_check(
    set: &ModelWindow,
    waiters: &[LeaseWaiter],
    now_ms: i64,
    out_of_memory: bool,
) {
    let mut lists = WaitLists::new();
    let ids: Vec<WaiterId> = waiters
        .iter()
        .map(|waiter| {
            let want = Want::Lease {
                member: waiter.member.clone(),
                window: waiter.window,
                limit: waiter.limit,
                permits: waiter.permits,
                separator: None,
                fence: false,
            };
            assert!(want.can_be_granted(), "{waiter:?}");
            lists.join(0, b"k", want)
        })
        .collect();
    let Some(line) = lists.line_of(0, b"k") else {
        return;
    };
    let now = seconds_of(now_ms);
    let mut evicted = set.clone();
    let plan = look(&lists, line, &mut evicted, now, now_ms, out_of_memory);
    // The model: each in the order it came, against the window its predecessors' grants left.
    let mut window = evicted.clone();
    let mut served = plan.served.iter().peekable();
    let mut waiting = Vec::new();
    for (waiter, &id) in waiters.iter().zip(&ids) {
        let cutoff = zwindow::cutoff(now, waiter.window);
        let fits = zwindow::fits_permits(
            window.count_above(cutoff, zwindow::count_cap(waiter.limit)),
            waiter.permits,
            waiter.limit,
        );
        match served.peek() {
            Some(&&(served_id, state)) if served_id == id => {
                served.next();
                assert!(fits, "{waiter:?} was served, but does not fit: {plan:?}");
                match state {
                    State::Granted => {
                        assert!(!out_of_memory, "a grant out of memory: {plan:?}");
                        for index in 0..waiter.permits {
                            window.add(now, &zwindow::permit_member(&waiter.member, index, None));
                        }
                    }
                    State::OutOfMemory => assert!(out_of_memory, "{plan:?}"),
                    State::Refused => {
                        panic!("the plan writes no grant: {plan:?}")
                    }
                    State::Waiting => panic!("served as waiting: {plan:?}"),
                }
            }
            _ => {
                assert!(!fits, "{waiter:?} fits, but was passed over: {plan:?}");
                waiting.push(waiter);
            }
        }
    }
    assert!(
        served.next().is_none(),
        "served out of arrival order: {plan:?}"
    );
    // The next look: when the first member leaves the window of a waiter still waiting, or
    // the key expires as the last grant armed it (the model's set has no TTL of its own).
    let leaves = waiting.iter().filter_map(|waiter| {
        let cutoff = zwindow::cutoff(now, waiter.window);
        let oldest = window.first_above(cutoff, |_, score| score)?;
        let leaves = ((oldest + waiter.window) * 1000.0).ceil() as i64;
        Some(leaves.saturating_sub(now_ms).max(0) + 1)
    });
    let last_grant = plan
        .served
        .iter()
        .rev()
        .find(|(_, state)| *state == State::Granted)
        .and_then(|(id, _)| ids.iter().position(|other| other == id));
    let key_goes = last_grant.map(|at| (waiters[at].window * 1000.0).ceil() as i64 + 1);
    let expected = if waiting.is_empty() {
        None
    } else {
        leaves.chain(key_goes).min()
    };
    assert_eq!(plan.look_again_ms, expected, "the next look: {plan:?}");
}

/// The module's look, on the model: the eviction of what left every waiting window, the rooms,
/// the plan.
fn look(
    lists: &WaitLists,
    line: LineId,
    set: &mut ModelWindow,
    now: f64,
    now_ms: i64,
    out_of_memory: bool,
) -> Plan {
    let Some(line_view) = lists.line(line) else {
        return Plan::default();
    };
    let empty = set.cardinality() == 0;
    let rooms: Vec<Room> = match plan::eviction_cutoff(line_view, now) {
        Some(cutoff) if !empty => {
            let eviction = zwindow::evict(set, cutoff);
            line_view
                .groups
                .iter()
                .map(|group| {
                    let (window, limit) = match group.ask {
                        super::Ask::Lease { limit, .. } => {
                            (group.ask.window().unwrap_or_default(), limit)
                        }
                        super::Ask::Lock | super::Ask::Read | super::Ask::Write { .. } => {
                            return Room::default()
                        }
                    };
                    zwindow::room(set, &eviction, zwindow::cutoff(now, window), limit)
                })
                .collect()
        }
        _ => vec![Room::default(); line_view.groups.len()],
    };
    let key = if set.cardinality() == 0 {
        KeyNow::Empty
    } else {
        KeyNow::SortedSet {
            expires_in_ms: None,
        }
    };
    plan::serve(lists, line, key, &rooms, now_ms, out_of_memory)
}

/// A case from `bytes` (the fuzzer's input, or the unit tests' generator): a set of members
/// around now, and lease waiters with windows and limits from small sets, so that groups form
/// and windows differ. `None` when the bytes run out.
pub fn case_from(bytes: &[u8]) -> Option<(ModelWindow, Vec<LeaseWaiter>, i64, bool)> {
    let mut bytes = bytes.iter().copied();
    let mut next = || bytes.next();
    let now_ms = 1_700_000_000_000 + i64::from(next()?) * 7;
    let now = seconds_of(now_ms);
    let mut set = ModelWindow::default();
    for i in 0..next()? % 16 {
        // From 120 s before now to 11 s after (a caller's clock ahead), to 2 ms.
        let offset_ms = i64::from(u16::from_le_bytes([next()?, next()?])) * 2 - 120_000;
        set.add(now + offset_ms as f64 / 1000.0, format!("m{i}").as_bytes());
    }
    const WINDOWS: [f64; 4] = [5.0, 10.0, 30.5, 60.0];
    const LIMITS: [i64; 4] = [1, 2, 3, 5];
    const PERMITS: [usize; 4] = [1, 1, 2, 3];
    let waiters = (0..next()? % 10)
        .map(|i| {
            let pick = next()?;
            let limit = LIMITS[usize::from(pick / 4 % 4)];
            Some(LeaseWaiter {
                member: format!("w{i}").into_bytes(),
                window: WINDOWS[usize::from(pick % 4)],
                limit,
                // Never more permits than the limit: that waiter never stands in a line.
                permits: PERMITS[usize::from(pick / 16 % 4)].min(limit as usize),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let out_of_memory = next()? % 8 == 0;
    Some((set, waiters, now_ms, out_of_memory))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten thousand generated lines, each served and checked against the model.
    #[test]
    fn the_plan_is_each_waiter_in_order_under_its_own_limit() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut bytes = vec![0u8; 128];
        let mut checked = 0;
        for _ in 0..10_000 {
            for byte in bytes.iter_mut() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *byte = state as u8;
            }
            if let Some((set, waiters, now_ms, oom)) = case_from(&bytes) {
                serve_and_check(&set, &waiters, now_ms, oom);
                checked += usize::from(!waiters.is_empty());
            }
        }
        assert!(checked > 5_000, "{checked}");
    }
}
