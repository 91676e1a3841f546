//! GOBLIN.MGCRA's decision: GOBLIN.GCRA over several policies at one instant, all or nothing.
//! Each policy is GCRA's own arithmetic on one key's TAT (`gcra::decide`); the request is
//! allowed only if every policy allows it, and then every TAT advances as GOBLIN.GCRA would
//! advance it. A refusal writes nothing. `Peek` decides and writes nothing; `Refund` gives
//! tokens back, then replies as a peek at cost 1.
//!
//! The policies are taken in order, as GOBLIN.GCRA calls on each key in one MULTI would be:
//! two policies that name one key decide on the TAT the earlier one leaves. The keys are
//! indices into the TATs the caller read, one per distinct key.

use smallvec::SmallVec;

use crate::gcra::{decide, emission_interval, GcraOverflow, Limits, Throttle};

/// As many policies as a call usually names, kept on the stack: a call decides with no
/// allocation.
pub type Few<T> = SmallVec<[T; 4]>;

/// One policy of a call: its key (an index into the TATs) and its limits, `cost` being the
/// call's `TOKENS` (what a request costs, or what a refund gives back).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Policy {
    pub key: usize,
    pub limits: Limits,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Decide, and take the tokens if every policy allows.
    Hit,
    /// Decide, and write nothing.
    Peek,
    /// Give `cost` tokens back to every policy whose key exists, then peek at cost 1.
    Refund,
}

/// What a key becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    /// Its TAT, stored as GOBLIN.GCRA stores one.
    Store(i64),
    /// A refund filled its bucket: the key goes (a missing key is a full bucket).
    Delete,
}

/// The reply, and the writes that go with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mgcra {
    /// Whether any policy refused.
    pub limited: bool,
    /// When allowed: -1. When refused: the largest `retry_after` of the refusing policies, or
    /// -1 if one of them never allows this request (it costs more than its capacity).
    pub retry_after: i64,
    /// Per policy, in order: GOBLIN.GCRA's reply when the request is allowed; when refused,
    /// GOBLIN.GCRA's refusal from the TAT as it stands (`retry_after` -1 for a policy that
    /// alone would allow).
    pub policies: Few<Throttle>,
    /// Per key that changes: (its index, what it becomes). Empty unless allowed, or a refund.
    pub writes: Few<(usize, Write)>,
}

impl Mgcra {
    /// The reply's two leading fields.
    pub fn head(&self) -> [i64; 2] {
        [i64::from(self.limited), self.retry_after]
    }
}

/// The call, over `tats` (per distinct key, as read: `None` for a missing key) at `now`
/// (microseconds, a whole millisecond). An overflow in any policy is the whole call's error,
/// and nothing is written.
pub fn mgcra(
    tats: &[Option<i64>],
    policies: &[Policy],
    mode: Mode,
    now: i64,
) -> Result<Mgcra, GcraOverflow> {
    match mode {
        Mode::Hit => {
            let (mut reply, work) = decide_all(tats, policies, now)?;
            if !reply.limited {
                reply.writes = changes(tats, &work, now);
            }
            Ok(reply)
        }
        Mode::Peek => Ok(decide_all(tats, policies, now)?.0),
        Mode::Refund => {
            let refunded = refund(tats, policies, now)?;
            let peek: Few<Policy> = policies
                .iter()
                .map(|policy| Policy {
                    limits: Limits {
                        cost: 1,
                        ..policy.limits
                    },
                    ..*policy
                })
                .collect();
            let (mut reply, _) = decide_all(&refunded, &peek, now)?;
            reply.writes = changes(tats, &refunded, now);
            Ok(reply)
        }
    }
}

/// Every policy in order on a working copy of the TATs: the reply, and the TATs the request
/// would leave if allowed.
fn decide_all(
    tats: &[Option<i64>],
    policies: &[Policy],
    now: i64,
) -> Result<(Mgcra, Few<Option<i64>>), GcraOverflow> {
    let mut work = Few::from_slice(tats);
    let mut decisions: Few<_> = SmallVec::with_capacity(policies.len());
    for policy in policies {
        let slot = work.get_mut(policy.key).ok_or(GcraOverflow::Tokens)?;
        let decision = decide(*slot, &policy.limits, now)?;
        if let Some(tat) = decision.new_tat {
            *slot = Some(tat);
        }
        decisions.push(decision);
    }
    let limited = decisions.iter().any(|d| d.throttle.limited);
    let reply = if limited {
        let refusing = decisions.iter().filter(|d| d.throttle.limited);
        let never = refusing.clone().any(|d| d.throttle.retry_after < 0);
        Mgcra {
            limited,
            retry_after: if never {
                -1
            } else {
                refusing.map(|d| d.throttle.retry_after).max().unwrap_or(-1)
            },
            policies: decisions.iter().map(|d| d.standing()).collect(),
            writes: Few::new(),
        }
    } else {
        Mgcra {
            limited,
            retry_after: -1,
            policies: decisions.iter().map(|d| d.throttle).collect(),
            writes: Few::new(),
        }
    };
    Ok((reply, work))
}

/// The TATs after giving `cost` tokens back to each policy whose key has one: `cost` emission
/// intervals earlier, never before `now`.
fn refund(
    tats: &[Option<i64>],
    policies: &[Policy],
    now: i64,
) -> Result<Few<Option<i64>>, GcraOverflow> {
    let mut work = Few::from_slice(tats);
    for policy in policies {
        let emission = emission_interval(&policy.limits);
        if emission > i64::MAX / policy.limits.cost {
            return Err(GcraOverflow::Tokens);
        }
        let slot = work.get_mut(policy.key).ok_or(GcraOverflow::Tokens)?;
        if let Some(tat) = *slot {
            *slot = Some(tat.saturating_sub(emission * policy.limits.cost).max(now));
        }
    }
    Ok(work)
}

/// The keys whose TAT changed, and what they become: a TAT no later than `now` is a full
/// bucket, and its key goes.
fn changes(before: &[Option<i64>], after: &[Option<i64>], now: i64) -> Few<(usize, Write)> {
    before
        .iter()
        .zip(after)
        .enumerate()
        .filter(|(_, (old, new))| old != new || new.is_some_and(|tat| tat <= now))
        .filter_map(|(key, (_, new))| {
            new.map(|tat| {
                (
                    key,
                    if tat > now {
                        Write::Store(tat)
                    } else {
                        Write::Delete
                    },
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gcra::{throttle, MemoryTat};

    const NOW: i64 = 1_700_000_000_000_000;

    fn limits(max_burst: i64, tokens_per_period: i64, period: f64, cost: i64) -> Limits {
        Limits {
            capacity: Limits::capacity_of(max_burst),
            tokens_per_period,
            period,
            cost,
        }
    }

    fn policy(key: usize, max_burst: i64, rate: i64, period: f64, cost: i64) -> Policy {
        Policy {
            key,
            limits: limits(max_burst, rate, period, cost),
        }
    }

    /// GOBLIN.GCRA on each key in one MULTI, the writes kept only if none refused: the
    /// definition of an allowed call, and of each refusing policy's reply.
    fn by_gcra(
        tats: &[Option<i64>],
        policies: &[Policy],
        now: i64,
    ) -> (Vec<Throttle>, Vec<Option<i64>>) {
        let mut keys: Vec<MemoryTat> = tats
            .iter()
            .map(|tat| MemoryTat {
                tat: *tat,
                expires_at: None,
            })
            .collect();
        let replies = policies
            .iter()
            .map(|p| throttle(&mut keys[p.key], &p.limits, now).expect("no overflow"))
            .collect();
        (replies, keys.iter().map(|key| key.tat).collect())
    }

    #[test]
    fn one_policy_is_goblin_gcra() {
        let mut tat = None;
        let p = [policy(0, 2, 1, 10.0, 1)];
        for step in 0..6 {
            let now = NOW + step * 1_000_000;
            let (gcra, after) = by_gcra(&[tat], &p, now);
            let m = mgcra(&[tat], &p, Mode::Hit, now).unwrap();
            assert_eq!(m.policies[..], gcra[..], "step {step}");
            assert_eq!(m.head(), [i64::from(gcra[0].limited), gcra[0].retry_after]);
            let written = match m.writes.as_slice() {
                [] => tat,
                [(0, Write::Store(new))] => Some(*new),
                other => panic!("{other:?}"),
            };
            assert_eq!(written, after[0], "step {step}");
            tat = written;
        }
    }

    #[test]
    fn all_or_nothing() {
        // 10 a second and 3 a minute: the fourth request is refused by the minute only.
        let p = [policy(0, 9, 10, 1.0, 1), policy(1, 2, 3, 60.0, 1)];
        let mut tats = vec![None, None];
        for _ in 0..3 {
            let m = mgcra(&tats, &p, Mode::Hit, NOW).unwrap();
            assert!(!m.limited);
            let (gcra, after) = by_gcra(&tats, &p, NOW);
            assert_eq!(m.policies[..], gcra[..]);
            tats = after;
        }
        let m = mgcra(&tats, &p, Mode::Hit, NOW).unwrap();
        assert!(m.limited);
        assert!(m.writes.is_empty(), "a refusal writes nothing");
        let (gcra, _) = by_gcra(&tats, &p, NOW);
        assert!(!gcra[0].limited && gcra[1].limited);
        // The refusing policy says what GOBLIN.GCRA says; the allowing one stands unadvanced.
        assert_eq!(m.policies[1], gcra[1]);
        assert_eq!(
            m.policies[0],
            Throttle {
                limited: false,
                limit: 10,
                remaining: gcra[0].remaining + 1,
                retry_after: -1,
                reset_after: 1,
            }
        );
        assert_eq!(m.retry_after, gcra[1].retry_after);
        assert_eq!(m.retry_after, 20);
    }

    #[test]
    fn the_longest_wait_and_the_request_that_never_fits() {
        let p = [policy(0, 0, 1, 5.0, 1), policy(1, 0, 1, 60.0, 1)];
        let tats = [Some(NOW + 5_000_000), Some(NOW + 60_000_000)];
        let m = mgcra(&tats, &p, Mode::Hit, NOW).unwrap();
        assert_eq!(m.head(), [1, 60]);
        assert_eq!(m.policies[0].retry_after, 5);
        // A cost above one policy's capacity: never, whatever the others say.
        let p = [policy(0, 0, 1, 5.0, 3), policy(1, 9, 1, 60.0, 3)];
        let m = mgcra(&[Some(NOW + 5_000_000), None], &p, Mode::Hit, NOW).unwrap();
        assert_eq!(m.head(), [1, -1]);
        assert_eq!(m.policies[1].retry_after, -1, "allowed alone");
    }

    #[test]
    fn a_peek_replies_as_the_hit_and_writes_nothing() {
        let p = [policy(0, 4, 1, 10.0, 2), policy(1, 1, 1, 1.0, 2)];
        for tats in [
            [None, None],
            [Some(NOW + 1_000_000), None],
            [None, Some(NOW + 900_000)],
        ] {
            let hit = mgcra(&tats, &p, Mode::Hit, NOW).unwrap();
            let peek = mgcra(&tats, &p, Mode::Peek, NOW).unwrap();
            assert_eq!((peek.head(), &peek.policies), (hit.head(), &hit.policies));
            assert!(peek.writes.is_empty());
        }
        // At cost 0, what is left now.
        let p = [policy(0, 4, 1, 10.0, 0)];
        let m = mgcra(&[Some(NOW + 20_000_000)], &p, Mode::Peek, NOW).unwrap();
        assert_eq!(m.head(), [0, -1]);
        assert_eq!(m.policies[0].remaining, 3);
        assert_eq!(m.policies[0].reset_after, 20);
    }

    #[test]
    fn a_peek_of_one_policy_is_gcras_peek() {
        // GOBLIN.GCRA's PEEK and GOBLIN.MGCRA's with one policy: one answer.
        for (tat, cost) in [
            (None, 0),
            (None, 1),
            (Some(NOW + 1_000_000), 3),
            (Some(NOW + 50_000_000), 1),
            (Some(NOW - 5_000_000), 9),
        ] {
            let p = [policy(0, 4, 1, 10.0, cost)];
            let m = mgcra(&[tat], &p, Mode::Peek, NOW).unwrap();
            let peeked = crate::gcra::peek(tat, &p[0].limits, NOW).unwrap();
            assert_eq!(m.policies[..], [peeked], "{tat:?} at cost {cost}");
            assert_eq!(m.head(), [i64::from(peeked.limited), peeked.retry_after]);
        }
    }

    #[test]
    fn a_refund_moves_the_tat_back_never_past_now() {
        let p = [
            policy(0, 9, 1, 10.0, 3),
            policy(1, 9, 1, 10.0, 3),
            policy(2, 9, 1, 10.0, 3),
        ];
        let tats = [Some(NOW + 50_000_000), Some(NOW + 20_000_000), None];
        let m = mgcra(&tats, &p, Mode::Refund, NOW).unwrap();
        // 3 tokens of 10 s: 30 s back; the second is full again, and goes; the third stays
        // missing.
        assert_eq!(
            m.writes[..],
            [(0, Write::Store(NOW + 20_000_000)), (1, Write::Delete)]
        );
        // Then a peek at cost 1.
        let peek = [
            policy(0, 9, 1, 10.0, 1),
            policy(1, 9, 1, 10.0, 1),
            policy(2, 9, 1, 10.0, 1),
        ];
        let after = [Some(NOW + 20_000_000), Some(NOW), None];
        let expected = mgcra(&after, &peek, Mode::Peek, NOW).unwrap();
        assert_eq!(
            (m.head(), &m.policies),
            (expected.head(), &expected.policies)
        );
        assert_eq!(m.policies[0].remaining, 7);
        assert_eq!(m.policies[1].remaining, 9);
    }

    #[test]
    fn a_key_named_twice_is_decided_twice_in_order() {
        let p = [policy(0, 1, 1, 10.0, 1), policy(0, 1, 1, 10.0, 1)];
        let m = mgcra(&[None], &p, Mode::Hit, NOW).unwrap();
        assert!(!m.limited);
        assert_eq!(m.writes[..], [(0, Write::Store(NOW + 20_000_000))]);
        let (gcra, after) = by_gcra(&[None], &p, NOW);
        assert_eq!(m.policies[..], gcra[..]);
        assert_eq!(after, [Some(NOW + 20_000_000)]);
        let m = mgcra(&after, &p, Mode::Hit, NOW).unwrap();
        assert!(m.limited && m.writes.is_empty());
    }

    #[test]
    fn an_overflow_in_any_policy_is_the_error() {
        let p = [
            policy(0, 1, 1, 10.0, 1),
            policy(1, 1, 1, 9.9e11, i64::MAX / 1000),
        ];
        assert_eq!(
            mgcra(&[None, None], &p, Mode::Hit, NOW),
            Err(GcraOverflow::Tokens)
        );
        assert_eq!(
            mgcra(&[None, None], &p, Mode::Refund, NOW),
            Err(GcraOverflow::Tokens)
        );
    }
}
