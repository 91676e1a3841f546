//! The limits the workers call, and the model each reply is checked against: every limit's
//! call is one pipeline `TIME, (GET k, PEXPIRETIME k)..., call, (GET k, PEXPIRETIME k)...,
//! TIME`, in which nothing of another client runs, so the keys read before are what the call
//! saw, and the keys read after what it left. `goblin_core` decides, from what was read before
//! and each millisecond the call may have run in, what it must answer and leave; the reply and
//! the keys after must be one of those. Nothing here trusts the server: a reply of another
//! shape is a finding, not a panic.
//!
//! Each call also says what it admitted, for the quota checker (`crate::checks::quota`).

use goblin_core::decimal::parse_integer;
use goblin_core::fwindow::{self, Group, Hit, Over};
use goblin_core::gcra::{self, Limits as GcraLimits};
use goblin_core::increx::{self, CounterPlan, CounterTtl};
use goblin_core::mgcra::{self, Policy, Write as MgcraWrite};
use goblin_core::native::cl_throttle;
use goblin_core::swindow;

use crate::rng::Rng;
use crate::wire::{cmd, Command, Reply, ReplyExt};

/// One policy of GCRA's family: `max_burst tokens_per_period period` (seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub burst: i64,
    pub per: i64,
    pub period: i64,
}

impl Rate {
    fn limits(self, cost: i64) -> GcraLimits {
        GcraLimits {
            capacity: GcraLimits::capacity_of(self.burst),
            tokens_per_period: self.per,
            period: self.period as f64,
            cost,
        }
    }

    /// Microseconds between two tokens.
    pub fn emission_us(self) -> i64 {
        gcra::emission_interval(&self.limits(1))
    }

    pub fn capacity(self) -> i64 {
        self.burst + 1
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MgcraMode {
    Hit,
    Peek,
    Refund,
}

/// A limit's call, with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum Family {
    /// GOBLIN.FWINDOW key window [BY n] LIMIT max [RESTART | BLOCK ms | BACKOFF].
    Fwindow {
        key: Vec<u8>,
        window_ms: i64,
        by: i64,
        limit: i64,
        over: Over,
    },
    /// GOBLIN.MFWINDOW n (key window limit)... [BY n].
    Mfwindow {
        windows: Vec<(Vec<u8>, i64, i64)>,
        by: i64,
    },
    /// GOBLIN.GCRA key max_burst tokens_per_period period [TOKENS n] [PEEK].
    Gcra {
        key: Vec<u8>,
        rate: Rate,
        cost: i64,
        peek: bool,
    },
    /// GOBLIN.MGCRA n (key rate)... [TOKENS n] [PEEK | REFUND].
    Mgcra {
        policies: Vec<(Vec<u8>, Rate)>,
        cost: i64,
        mode: MgcraMode,
    },
    /// CL.THROTTLE key max_burst count_per_period period [quantity].
    Cell {
        key: Vec<u8>,
        rate: Rate,
        quantity: i64,
    },
    /// GOBLIN.INCREX key seconds [COST n], admitted while the count is at most `quota`.
    Increx {
        key: Vec<u8>,
        seconds: i64,
        cost: i64,
        quota: i64,
    },
    /// The INCREX stand-in (Redis 8.8's contract), as Redis's own rate limiter calls it:
    /// `INCREX key BYINT 1 UBOUND max PX ms ENX`.
    Native {
        key: Vec<u8>,
        max: i64,
        window_ms: i64,
    },
    /// GOBLIN.SWINDOW key window limit [COST n].
    Swindow {
        key: Vec<u8>,
        window_s: i64,
        limit: i64,
        cost: i64,
    },
}

/// The limit keys of a campaign, and the policies each is called with.
pub struct Catalog {
    pub tag: String,
}

impl Catalog {
    pub fn new(tag: &str) -> Catalog {
        Catalog { tag: tag.into() }
    }

    fn key(&self, slot: &str, name: &str) -> Vec<u8> {
        format!("{{{}{slot}}}{name}", self.tag).into_bytes()
    }

    /// A random call of a random limit.
    pub fn call(&self, rng: &mut Rng) -> Family {
        let over = [
            (b"a", Over::Count, 4),
            (b"b", Over::Block(1500), 3),
            (b"c", Over::Restart, 3),
            (b"d", Over::Backoff, 2),
        ];
        match rng.weighted(&[4, 3, 3, 3, 2, 2, 2, 2]) {
            0 => {
                let (name, over, limit) = *rng.pick(&over).unwrap_or(&over[0]);
                Family::Fwindow {
                    key: self.key("fw", std::str::from_utf8(name).unwrap_or("a")),
                    window_ms: 1000,
                    by: 1,
                    limit,
                    over,
                }
            }
            1 => {
                let mut windows = vec![(self.key("mf", "s"), 1000, 5)];
                if rng.chance(70) {
                    windows.push((self.key("mf", "m"), 3000, 8));
                }
                Family::Mfwindow {
                    windows,
                    by: if rng.chance(20) { 2 } else { 1 },
                }
            }
            2 => Family::Gcra {
                key: self.key("gc", "a"),
                rate: Rate {
                    burst: 3,
                    per: 5,
                    period: 1,
                },
                cost: if rng.chance(20) { 2 } else { 1 },
                peek: rng.chance(10),
            },
            3 => {
                let mut policies = vec![(
                    self.key("mg", "s"),
                    Rate {
                        burst: 2,
                        per: 4,
                        period: 1,
                    },
                )];
                if rng.chance(75) {
                    policies.push((
                        self.key("mg", "m"),
                        Rate {
                            burst: 5,
                            per: 10,
                            period: 5,
                        },
                    ));
                }
                let mode = match rng.below(20) {
                    0 => MgcraMode::Peek,
                    1 => MgcraMode::Refund,
                    _ => MgcraMode::Hit,
                };
                Family::Mgcra {
                    policies,
                    cost: if rng.chance(15) { 2 } else { 1 },
                    mode,
                }
            }
            4 => Family::Cell {
                key: self.key("cl", "a"),
                rate: Rate {
                    burst: 3,
                    per: 5,
                    period: 1,
                },
                quantity: if rng.chance(15) { 2 } else { 1 },
            },
            5 => Family::Increx {
                key: self.key("ix", "a"),
                seconds: 1,
                cost: if rng.chance(20) { 2 } else { 1 },
                quota: 5,
            },
            6 => Family::Native {
                key: self.key("nx", "a"),
                max: 5,
                window_ms: 1000,
            },
            _ => Family::Swindow {
                key: self.key("sw", "a"),
                window_s: 1,
                limit: 5,
                cost: if rng.chance(20) { 2 } else { 1 },
            },
        }
    }

    /// Every key a limit of this catalog writes.
    pub fn keys(&self) -> Vec<Vec<u8>> {
        let mut keys: Vec<Vec<u8>> = ["a", "b", "c", "d"]
            .iter()
            .map(|name| self.key("fw", name))
            .collect();
        keys.extend([
            self.key("mf", "s"),
            self.key("mf", "m"),
            self.key("gc", "a"),
            self.key("mg", "s"),
            self.key("mg", "m"),
            self.key("cl", "a"),
            self.key("ix", "a"),
            self.key("nx", "a"),
            self.key("sw", "a"),
        ]);
        keys
    }
}

fn text(n: i64) -> Vec<u8> {
    n.to_string().into_bytes()
}

impl Family {
    /// The keys it reads and writes, each once, in order.
    pub fn keys(&self) -> Vec<Vec<u8>> {
        let mut keys: Vec<Vec<u8>> = Vec::new();
        let mut add = |key: &Vec<u8>| {
            if !keys.contains(key) {
                keys.push(key.clone());
            }
        };
        match self {
            Family::Fwindow { key, .. }
            | Family::Gcra { key, .. }
            | Family::Cell { key, .. }
            | Family::Increx { key, .. }
            | Family::Native { key, .. }
            | Family::Swindow { key, .. } => add(key),
            Family::Mfwindow { windows, .. } => windows.iter().for_each(|(key, _, _)| add(key)),
            Family::Mgcra { policies, .. } => policies.iter().for_each(|(key, _)| add(key)),
        }
        keys
    }

    pub fn command(&self) -> Command {
        let mut words: Vec<Vec<u8>> = Vec::new();
        match self {
            Family::Fwindow {
                key,
                window_ms,
                by,
                limit,
                over,
            } => {
                words.extend([b"GOBLIN.FWINDOW".to_vec(), key.clone(), text(*window_ms)]);
                if *by != 1 {
                    words.extend([b"BY".to_vec(), text(*by)]);
                }
                words.extend([b"LIMIT".to_vec(), text(*limit)]);
                match over {
                    Over::Count => {}
                    Over::Restart => words.push(b"RESTART".to_vec()),
                    Over::Block(ms) => words.extend([b"BLOCK".to_vec(), text(*ms)]),
                    Over::Backoff => words.push(b"BACKOFF".to_vec()),
                }
            }
            Family::Mfwindow { windows, by } => {
                words.extend([b"GOBLIN.MFWINDOW".to_vec(), text(windows.len() as i64)]);
                for (key, window_ms, limit) in windows {
                    words.extend([key.clone(), text(*window_ms), text(*limit)]);
                }
                if *by != 1 {
                    words.extend([b"BY".to_vec(), text(*by)]);
                }
            }
            Family::Gcra {
                key,
                rate,
                cost,
                peek,
            } => {
                words.extend([
                    b"GOBLIN.GCRA".to_vec(),
                    key.clone(),
                    text(rate.burst),
                    text(rate.per),
                    text(rate.period),
                ]);
                if *cost != 1 {
                    words.extend([b"TOKENS".to_vec(), text(*cost)]);
                }
                if *peek {
                    words.push(b"PEEK".to_vec());
                }
            }
            Family::Mgcra {
                policies,
                cost,
                mode,
            } => {
                words.extend([b"GOBLIN.MGCRA".to_vec(), text(policies.len() as i64)]);
                for (key, rate) in policies {
                    words.extend([
                        key.clone(),
                        text(rate.burst),
                        text(rate.per),
                        text(rate.period),
                    ]);
                }
                if *cost != 1 {
                    words.extend([b"TOKENS".to_vec(), text(*cost)]);
                }
                match mode {
                    MgcraMode::Hit => {}
                    MgcraMode::Peek => words.push(b"PEEK".to_vec()),
                    MgcraMode::Refund => words.push(b"REFUND".to_vec()),
                }
            }
            Family::Cell {
                key,
                rate,
                quantity,
            } => {
                words.extend([
                    b"CL.THROTTLE".to_vec(),
                    key.clone(),
                    text(rate.burst),
                    text(rate.per),
                    text(rate.period),
                ]);
                if *quantity != 1 {
                    words.push(text(*quantity));
                }
            }
            Family::Increx {
                key, seconds, cost, ..
            } => {
                words.extend([b"GOBLIN.INCREX".to_vec(), key.clone(), text(*seconds)]);
                if *cost != 1 {
                    words.extend([b"COST".to_vec(), text(*cost)]);
                }
            }
            Family::Native {
                key,
                max,
                window_ms,
            } => {
                words.extend([
                    b"INCREX".to_vec(),
                    key.clone(),
                    b"BYINT".to_vec(),
                    b"1".to_vec(),
                    b"UBOUND".to_vec(),
                    text(*max),
                    b"PX".to_vec(),
                    text(*window_ms),
                    b"ENX".to_vec(),
                ]);
            }
            Family::Swindow {
                key,
                window_s,
                limit,
                cost,
            } => {
                words.extend([
                    b"GOBLIN.SWINDOW".to_vec(),
                    key.clone(),
                    text(*window_s),
                    text(*limit),
                ]);
                if *cost != 1 {
                    words.extend([b"COST".to_vec(), text(*cost)]);
                }
            }
        }
        words
    }

    /// The reads of its keys, made before and after the call.
    pub fn reads(&self) -> Vec<Command> {
        self.keys()
            .into_iter()
            .flat_map(|key| {
                [
                    vec![b"GET".to_vec(), key.clone()],
                    vec![b"PEXPIRETIME".to_vec(), key],
                ]
            })
            .collect()
    }

    pub fn name(&self) -> &'static str {
        match self {
            Family::Fwindow { .. } => "goblin.fwindow",
            Family::Mfwindow { .. } => "goblin.mfwindow",
            Family::Gcra { .. } => "goblin.gcra",
            Family::Mgcra { .. } => "goblin.mgcra",
            Family::Cell { .. } => "cl.throttle",
            Family::Increx { .. } => "goblin.increx",
            Family::Native { .. } => "increx",
            Family::Swindow { .. } => "goblin.swindow",
        }
    }
}

/// A key as a read saw it: its value (`None`: missing), its expiry (`None`: none), or another
/// type than a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Missing,
    Value {
        value: Vec<u8>,
        expires_at: Option<i64>,
    },
    OtherType,
}

impl Seen {
    fn read(get: &Reply, expiry: &Reply) -> Result<Seen, String> {
        match (get, expiry.as_int()) {
            (Reply::Error(e), _) if e.starts_with("WRONGTYPE") => Ok(Seen::OtherType),
            (Reply::Nil, _) => Ok(Seen::Missing),
            // Alive for GET and gone for PEXPIRETIME: the key reached its expiry between the two
            // reads. A call after them finds it gone; a key a call left so lapsed before the
            // read after it, which `after_matches` takes for gone.
            (Reply::Bulk(_), Some(-2)) => Ok(Seen::Missing),
            (Reply::Bulk(value), Some(at)) => Ok(Seen::Value {
                value: value.clone(),
                expires_at: (at >= 0).then_some(at),
            }),
            (Reply::Bulk(value), None) => Ok(Seen::Value {
                value: value.clone(),
                expires_at: None,
            }),
            other => Err(format!("a read gave {other:?}")),
        }
    }

    /// The key as a call at `now_ms` finds it: gone once its expiry has passed.
    fn at(&self, now_ms: i64) -> Seen {
        match self {
            Seen::Value {
                expires_at: Some(at),
                ..
            } if now_ms > *at => Seen::Missing,
            other => other.clone(),
        }
    }
}

/// What a key must be after the call: unchanged, a value with an expiry, or gone.
#[derive(Debug, Clone, PartialEq, Eq)]
enum After {
    Unchanged,
    Value {
        value: Vec<u8>,
        expires_at: Option<i64>,
    },
    /// A new value; its expiry as it was.
    ValueKeepTtl(Vec<u8>),
    Gone,
}

/// What the model says a call at one millisecond answers and leaves.
#[derive(Debug, Clone, PartialEq)]
struct Expected {
    reply: Expectation,
    after: Vec<After>,
}

#[derive(Debug, Clone, PartialEq)]
enum Expectation {
    Ints(Vec<i64>),
    Nested(Vec<i64>, Vec<Vec<i64>>),
    Int(i64),
    /// An error starting so.
    Error(&'static str),
}

fn matches(expectation: &Expectation, reply: &Reply) -> bool {
    match expectation {
        Expectation::Int(n) => reply.as_int() == Some(*n) && matches!(reply, Reply::Int(_)),
        Expectation::Ints(ints) => reply.ints().as_ref() == Some(ints),
        Expectation::Nested(head, groups) => {
            let Some(items) = reply.items() else {
                return false;
            };
            if items.len() != head.len() + groups.len() {
                return false;
            }
            let head_ok = items
                .iter()
                .zip(head)
                .all(|(item, want)| item.as_int() == Some(*want));
            let groups_ok = items[head.len()..]
                .iter()
                .zip(groups)
                .all(|(item, want)| item.ints().as_ref() == Some(want));
            head_ok && groups_ok
        }
        Expectation::Error(prefix) => reply.error().is_some_and(|e| e.starts_with(prefix)),
    }
}

fn counter(plan: &CounterPlan, keep: Option<i64>) -> After {
    match plan.ttl {
        CounterTtl::Keep => After::Value {
            value: text(plan.value),
            expires_at: keep,
        },
        CounterTtl::ArmAt(at) => After::Value {
            value: text(plan.value),
            expires_at: Some(at),
        },
        CounterTtl::DeleteNow => After::Gone,
    }
}

fn integer_of(seen: &Seen) -> Result<Option<(i64, Option<i64>)>, &'static str> {
    match seen {
        Seen::Missing => Ok(None),
        Seen::OtherType => Err("WRONGTYPE"),
        Seen::Value { value, expires_at } => match parse_integer(value) {
            Some(n) => Ok(Some((n, *expires_at))),
            None => Err("ERR"),
        },
    }
}

/// The model's answer for `family` on `keys` (as found at `now_ms`), or `None` where it has
/// none to give (an overflow the campaign never asks for).
fn expect(family: &Family, keys: &[Seen], now_ms: i64, ttl_now: i64) -> Option<Expected> {
    let wrong = |prefix: &'static str, n: usize| Expected {
        reply: Expectation::Error(prefix),
        after: vec![After::Unchanged; n],
    };
    let n = keys.len();
    match family {
        Family::Fwindow {
            window_ms,
            by,
            limit,
            over,
            ..
        } => {
            let standing = match integer_of(&keys[0]) {
                Ok(standing) => standing.map(|(v, at)| (v, at.map(|at| at - ttl_now))),
                Err(prefix) => return Some(wrong(prefix, n)),
            };
            let hit = Hit {
                window_ms: *window_ms,
                by: *by,
                limit: Some((*limit, *over)),
            };
            let outcome = fwindow::hit(standing, &hit, now_ms).ok()?;
            let keep = match &keys[0] {
                Seen::Value { expires_at, .. } => *expires_at,
                _ => None,
            };
            Some(Expected {
                reply: Expectation::Ints(outcome.reply().to_vec()),
                after: vec![counter(&outcome.write, keep)],
            })
        }
        Family::Mfwindow { windows, by } => {
            let distinct = family.keys();
            let mut standing = Vec::new();
            for seen in keys {
                match integer_of(seen) {
                    Ok(s) => standing.push(s.map(|(v, at)| (v, at.map(|at| at - ttl_now)))),
                    Err(prefix) => return Some(wrong(prefix, n)),
                }
            }
            let groups: Vec<Group> = windows
                .iter()
                .map(|(key, window_ms, limit)| Group {
                    key: distinct.iter().position(|k| k == key).unwrap_or(0),
                    window_ms: *window_ms,
                    limit: *limit,
                })
                .collect();
            let decided = fwindow::several(&standing, &groups, *by, now_ms).ok()?;
            let mut after = vec![After::Unchanged; n];
            for (index, plan) in &decided.writes {
                let keep = match &keys[*index] {
                    Seen::Value { expires_at, .. } => *expires_at,
                    _ => None,
                };
                after[*index] = counter(plan, keep);
            }
            Some(Expected {
                reply: Expectation::Nested(
                    vec![i64::from(decided.refused), decided.retry_after_ms],
                    decided.groups.iter().map(|g| g.to_vec()).collect(),
                ),
                after,
            })
        }
        Family::Gcra {
            rate, cost, peek, ..
        } => {
            let tat = match &keys[0] {
                Seen::Missing => None,
                Seen::OtherType => return Some(wrong("WRONGTYPE", n)),
                Seen::Value { value, .. } => match gcra::read_tat(value) {
                    Ok(tat) => Some(tat),
                    Err(_) => return Some(wrong("ERR", n)),
                },
            };
            let decision = gcra::decide(tat, &rate.limits(*cost), now_ms * 1000).ok()?;
            let after = match decision.new_tat.filter(|_| !peek) {
                Some(tat) => {
                    let stored = gcra::stored_tat(tat);
                    After::Value {
                        value: stored.text.as_bytes().to_vec(),
                        expires_at: Some(stored.expires_at_ms),
                    }
                }
                None => After::Unchanged,
            };
            Some(Expected {
                reply: Expectation::Ints(decision.throttle.reply().to_vec()),
                after: vec![after],
            })
        }
        Family::Mgcra {
            policies,
            cost,
            mode,
        } => {
            let distinct = family.keys();
            let mut tats = Vec::new();
            for seen in keys {
                match seen {
                    Seen::Missing => tats.push(None),
                    Seen::OtherType => return Some(wrong("WRONGTYPE", n)),
                    Seen::Value { value, .. } => match gcra::read_tat(value) {
                        Ok(tat) => tats.push(Some(tat)),
                        Err(_) => return Some(wrong("ERR", n)),
                    },
                }
            }
            let policies: Vec<Policy> = policies
                .iter()
                .map(|(key, rate)| Policy {
                    key: distinct.iter().position(|k| k == key).unwrap_or(0),
                    limits: rate.limits(*cost),
                })
                .collect();
            let mode = match mode {
                MgcraMode::Hit => mgcra::Mode::Hit,
                MgcraMode::Peek => mgcra::Mode::Peek,
                MgcraMode::Refund => mgcra::Mode::Refund,
            };
            let decided = mgcra::mgcra(&tats, &policies, mode, now_ms * 1000).ok()?;
            let mut after = vec![After::Unchanged; n];
            for (index, write) in &decided.writes {
                after[*index] = match write {
                    MgcraWrite::Store(tat) => {
                        let stored = gcra::stored_tat(*tat);
                        After::Value {
                            value: stored.text.as_bytes().to_vec(),
                            expires_at: Some(stored.expires_at_ms),
                        }
                    }
                    MgcraWrite::Delete => After::Gone,
                };
            }
            Some(Expected {
                reply: Expectation::Nested(
                    decided.head().to_vec(),
                    decided
                        .policies
                        .iter()
                        .map(|p| p.reply().to_vec())
                        .collect(),
                ),
                after,
            })
        }
        Family::Cell { rate, quantity, .. } => {
            let limits =
                cl_throttle::Limits::new(rate.burst, rate.per, rate.period, *quantity).ok()?;
            let tat = match &keys[0] {
                Seen::Missing => None,
                Seen::OtherType => return Some(wrong("WRONGTYPE", n)),
                Seen::Value { value, .. } => match cl_throttle::parse_tat(value) {
                    Some(tat) => Some(tat),
                    None => return Some(wrong("ERR", n)),
                },
            };
            let decision = cl_throttle::decide(&limits, tat, now_ms).ok()?;
            let after = match decision.store {
                Some(stored) => After::Value {
                    value: stored.text().as_bytes().to_vec(),
                    expires_at: Some(stored.expires_at_ms),
                },
                None => After::Unchanged,
            };
            Some(Expected {
                reply: Expectation::Ints(decision.reply.reply().to_vec()),
                after: vec![after],
            })
        }
        Family::Increx { seconds, cost, .. } => {
            let current = match integer_of(&keys[0]) {
                Ok(current) => current.map(|(v, _)| v),
                Err(prefix) => return Some(wrong(prefix, n)),
            };
            let plan = increx::plan(current, *seconds, *cost, || now_ms).ok()?;
            let after = match plan.ttl {
                CounterTtl::Keep => After::ValueKeepTtl(text(plan.value)),
                _ => counter(&plan, None),
            };
            Some(Expected {
                reply: Expectation::Int(plan.value),
                after: vec![after],
            })
        }
        Family::Native { max, window_ms, .. } => {
            let (current, ttl) = match integer_of(&keys[0]) {
                Ok(current) => (
                    current.map_or(0, |(v, _)| v),
                    current.and_then(|(_, at)| at),
                ),
                Err(prefix) => return Some(wrong(prefix, n)),
            };
            let next = current.checked_add(1)?;
            if next > *max {
                return Some(Expected {
                    reply: Expectation::Ints(vec![current, 0]),
                    after: vec![After::Unchanged],
                });
            }
            // ENX: the window is armed only on a key without a TTL.
            let expires_at = Some(ttl.unwrap_or(now_ms + window_ms));
            Some(Expected {
                reply: Expectation::Ints(vec![next, 1]),
                after: vec![After::Value {
                    value: text(next),
                    expires_at,
                }],
            })
        }
        Family::Swindow {
            window_s,
            limit,
            cost,
            ..
        } => {
            let stored = match &keys[0] {
                Seen::Missing => None,
                Seen::OtherType => return Some(wrong("WRONGTYPE", n)),
                Seen::Value { value, .. } => match swindow::Stored::parse(value) {
                    Some(stored) => Some(stored),
                    None => return Some(wrong("ERR", n)),
                },
            };
            let view = swindow::view(stored, window_s * 1000, now_ms).ok()?;
            let recorded = view
                .admits(*cost, *limit)
                .then(|| view.record(*cost))
                .flatten();
            let (admitted, view, after) = match recorded {
                Some((stored, at)) => (
                    1,
                    view.with(stored),
                    After::Value {
                        value: stored.text().as_bytes().to_vec(),
                        expires_at: Some(at),
                    },
                ),
                None => (0, view, After::Unchanged),
            };
            Some(Expected {
                reply: Expectation::Ints(vec![
                    admitted,
                    view.previous,
                    view.previous_ttl_ms,
                    view.current,
                    view.current_ttl_ms,
                ]),
                after: vec![after],
            })
        }
    }
}

/// Whether the key after the call is what the model says, given what it was before.
fn after_matches(want: &After, before: &Seen, after: &Seen, hi_ms: i64) -> bool {
    // A key whose expiry passed before the read after may be gone by then.
    let lapsed = |at: Option<i64>| at.is_some_and(|at| at <= hi_ms + 1);
    match (want, after) {
        (After::Unchanged, after) => {
            after == before
                || (*after == Seen::Missing
                    && matches!(before, Seen::Value { expires_at, .. } if lapsed(*expires_at)))
        }
        (After::Gone, Seen::Missing) => true,
        // A new value under the expiry it had: gone by the read after if that expiry passed.
        (After::ValueKeepTtl(_), Seen::Missing) => {
            matches!(before, Seen::Value { expires_at, .. } if lapsed(*expires_at))
        }
        (After::Value { value, expires_at }, Seen::Missing) => {
            let _ = value;
            lapsed(*expires_at)
        }
        (
            After::Value { value, expires_at },
            Seen::Value {
                value: got,
                expires_at: got_at,
            },
        ) => value == got && expires_at == got_at,
        (
            After::ValueKeepTtl(value),
            Seen::Value {
                value: got,
                expires_at,
            },
        ) => {
            let kept = match before {
                Seen::Value {
                    expires_at: was, ..
                } => was == expires_at,
                _ => expires_at.is_none(),
            };
            value == got && kept
        }
        _ => false,
    }
}

/// The verdict on one call: `Ok` if the reply and the keys after are what the model says for
/// some millisecond the call may have run in, else what differs.
pub fn check(
    family: &Family,
    lo_us: i64,
    hi_us: i64,
    pre: &[Reply],
    reply: &Reply,
    post: &[Reply],
) -> Result<(), String> {
    let keys = family.keys().len();
    if pre.len() != 2 * keys || post.len() != 2 * keys {
        return Err(format!("{} reads for {keys} keys", pre.len()));
    }
    let read = |replies: &[Reply]| -> Result<Vec<Seen>, String> {
        replies
            .chunks(2)
            .map(|pair| Seen::read(&pair[0], &pair[1]))
            .collect()
    };
    // A step whose reads or call the server refused as a whole (the cluster down, a key that
    // moved, a server loading, writes refused) says nothing of the model.
    let refused = |reply: &Reply| {
        reply.error().is_some_and(|e| {
            [
                "MOVED",
                "ASK",
                "CLUSTERDOWN",
                "TRYAGAIN",
                "LOADING",
                "READONLY",
                "OOM",
                "NOREPLICAS",
                "MASTERDOWN",
                "BUSY",
            ]
            .iter()
            .any(|prefix| e.starts_with(prefix))
        })
    };
    if pre.iter().chain(post).chain([reply]).any(refused) {
        return Ok(());
    }
    let before = read(pre)?;
    let after = read(post)?;
    let (lo_ms, hi_ms) = (lo_us.div_euclid(1000), hi_us.div_euclid(1000));
    let mut tried = Vec::new();
    // Redis 7.0 reads its clock anew for a key's TTL and for the call's time: the two may
    // fall in neighbouring milliseconds.
    let candidates = (lo_ms..=hi_ms.max(lo_ms)).flat_map(|now_ms| {
        (now_ms - 1..=now_ms + 1)
            .filter(move |ttl_now| (lo_ms..=hi_ms.max(lo_ms)).contains(ttl_now))
            .map(move |ttl_now| (now_ms, ttl_now))
    });
    for (now_ms, ttl_now) in candidates {
        let seen: Vec<Seen> = before.iter().map(|seen| seen.at(now_ms)).collect();
        let Some(expected) = expect(family, &seen, now_ms, ttl_now) else {
            return Ok(());
        };
        let keys_ok = expected
            .after
            .iter()
            .zip(before.iter().zip(&after))
            .all(|(want, (was, is))| after_matches(want, was, is, hi_ms));
        if matches(&expected.reply, reply) && keys_ok {
            return Ok(());
        }
        if tried.len() < 4 {
            tried.push(format!(
                "at {now_ms} ms: {:?}, keys {:?}",
                expected.reply, expected.after
            ));
        }
    }
    Err(format!(
        "{} answered {} and left {:?}; the keys before were {:?}; the model says {}",
        family.name(),
        crate::wire::brief(reply),
        after,
        before,
        tried.join("; or ")
    ))
}

/// What a call admitted, for the quota: per key, the cost it took, and for a fixed window the
/// window's end (its key's expiry after the call).
#[derive(Debug, Clone, PartialEq)]
pub struct Admitted {
    pub key: Vec<u8>,
    pub cost: i64,
    /// A fixed window's: (its length, its limit, its end in Unix ms).
    pub fixed: Option<(i64, i64, i64)>,
    /// GCRA's: its rate.
    pub rate: Option<Rate>,
    /// Tokens given back (GOBLIN.MGCRA's REFUND): the quota grows by as much.
    pub refund: i64,
}

/// What `family`'s call admitted, from its reply and its keys after.
pub fn admitted(family: &Family, reply: &Reply, post: &[Reply]) -> Vec<Admitted> {
    let expiry_of = |index: usize| post.get(2 * index + 1).and_then(ReplyExt::as_int);
    let distinct = family.keys();
    let index_of = |key: &Vec<u8>| distinct.iter().position(|k| k == key).unwrap_or(0);
    match family {
        Family::Fwindow {
            key,
            window_ms,
            by,
            limit,
            ..
        } => {
            let count = reply.ints().and_then(|ints| ints.first().copied());
            match (count, expiry_of(0)) {
                (Some(count), Some(end)) if count <= *limit && end > 0 => vec![Admitted {
                    key: key.clone(),
                    cost: *by,
                    fixed: Some((*window_ms, *limit, end)),
                    rate: None,
                    refund: 0,
                }],
                _ => Vec::new(),
            }
        }
        Family::Mfwindow { windows, by } => {
            let refused = reply
                .items()
                .and_then(|items| items.first())
                .and_then(ReplyExt::as_int);
            if refused != Some(0) {
                return Vec::new();
            }
            windows
                .iter()
                .filter_map(|(key, window_ms, limit)| {
                    let end = expiry_of(index_of(key)).filter(|end| *end > 0)?;
                    Some(Admitted {
                        key: key.clone(),
                        cost: *by,
                        fixed: Some((*window_ms, *limit, end)),
                        rate: None,
                        refund: 0,
                    })
                })
                .collect()
        }
        Family::Increx {
            key,
            cost,
            quota,
            seconds,
        } => match (reply.as_int(), expiry_of(0)) {
            (Some(count), Some(end)) if count <= *quota && end > 0 => vec![Admitted {
                key: key.clone(),
                cost: *cost,
                fixed: Some((seconds * 1000, *quota, end)),
                rate: None,
                refund: 0,
            }],
            _ => Vec::new(),
        },
        Family::Gcra {
            key,
            rate,
            cost,
            peek,
        } => {
            let limited = reply.ints().and_then(|ints| ints.first().copied());
            if *peek || limited != Some(0) {
                return Vec::new();
            }
            vec![Admitted {
                key: key.clone(),
                cost: *cost,
                fixed: None,
                rate: Some(*rate),
                refund: 0,
            }]
        }
        Family::Mgcra {
            policies,
            cost,
            mode,
        } => {
            let limited = reply
                .items()
                .and_then(|items| items.first())
                .and_then(ReplyExt::as_int);
            match mode {
                MgcraMode::Peek => Vec::new(),
                MgcraMode::Refund if reply.items().is_some() => policies
                    .iter()
                    .map(|(key, rate)| Admitted {
                        key: key.clone(),
                        cost: 0,
                        fixed: None,
                        rate: Some(*rate),
                        refund: *cost,
                    })
                    .collect(),
                MgcraMode::Refund => Vec::new(),
                MgcraMode::Hit if limited == Some(0) => policies
                    .iter()
                    .map(|(key, rate)| Admitted {
                        key: key.clone(),
                        cost: *cost,
                        fixed: None,
                        rate: Some(*rate),
                        refund: 0,
                    })
                    .collect(),
                MgcraMode::Hit => Vec::new(),
            }
        }
        Family::Cell {
            key,
            rate,
            quantity,
        } => {
            let limited = reply.ints().and_then(|ints| ints.first().copied());
            if limited != Some(0) || *quantity == 0 {
                return Vec::new();
            }
            vec![Admitted {
                key: key.clone(),
                cost: *quantity,
                fixed: None,
                rate: Some(*rate),
                refund: 0,
            }]
        }
        Family::Native {
            key,
            max,
            window_ms,
        } => {
            let applied = reply.ints().and_then(|ints| ints.get(1).copied());
            match (applied, expiry_of(0)) {
                (Some(1), Some(end)) if end > 0 => vec![Admitted {
                    key: key.clone(),
                    cost: 1,
                    fixed: Some((*window_ms, *max, end)),
                    rate: None,
                    refund: 0,
                }],
                _ => Vec::new(),
            }
        }
        Family::Swindow { .. } => Vec::new(),
    }
}

/// A command's reads, as a step's pipeline carries them.
pub fn pipeline(family: &Family) -> Vec<Command> {
    let reads = family.reads();
    let mut commands = vec![cmd(&["TIME"])];
    commands.extend(reads.iter().cloned());
    commands.push(family.command());
    commands.extend(reads);
    commands.push(cmd(&["TIME"]));
    commands
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(text.as_bytes().to_vec())
    }

    /// GOBLIN.FWINDOW k 1000 LIMIT 2: two a second.
    fn two_a_second() -> Family {
        Family::Fwindow {
            key: b"k".to_vec(),
            window_ms: 1000,
            by: 1,
            limit: 2,
            over: Over::Count,
        }
    }

    #[test]
    fn a_fixed_window_is_checked_against_the_model() {
        let family = two_a_second();
        let now_us = 1_700_000_000_000_000;
        let now_ms = now_us / 1000;
        // A new key: count 1, armed for the window.
        let pre = vec![Reply::Nil, Reply::Int(-2)];
        let post = vec![bulk("1"), Reply::Int(now_ms + 1000)];
        let reply = Reply::Array(vec![Reply::Int(1), Reply::Int(1000)]);
        assert_eq!(
            check(&family, now_us, now_us + 50, &pre, &reply, &post),
            Ok(())
        );
        // One more than it may: the model says 3, not 2.
        let pre = vec![bulk("2"), Reply::Int(now_ms + 400)];
        let post = vec![bulk("2"), Reply::Int(now_ms + 400)];
        let reply = Reply::Array(vec![Reply::Int(2), Reply::Int(400)]);
        assert!(check(&family, now_us, now_us + 50, &pre, &reply, &post).is_err());
        let post = vec![bulk("3"), Reply::Int(now_ms + 400)];
        let reply = Reply::Array(vec![Reply::Int(3), Reply::Int(400)]);
        assert_eq!(
            check(&family, now_us, now_us + 50, &pre, &reply, &post),
            Ok(())
        );
        assert!(admitted(&family, &reply, &post).is_empty());
    }

    #[test]
    fn mfwindow_refuses_what_goes_over() {
        let family = Family::Mfwindow {
            windows: vec![(b"a".to_vec(), 1000, 1), (b"b".to_vec(), 3000, 5)],
            by: 1,
        };
        let now_us = 1_700_000_000_000_000;
        let now_ms = now_us / 1000;
        let pre = vec![
            bulk("1"),
            Reply::Int(now_ms + 500),
            Reply::Nil,
            Reply::Int(-2),
        ];
        // Allowed where it must refuse: a finding.
        let post = vec![
            bulk("2"),
            Reply::Int(now_ms + 500),
            bulk("1"),
            Reply::Int(now_ms + 3000),
        ];
        let reply = Reply::Array(vec![
            Reply::Int(0),
            Reply::Int(-1),
            Reply::Array(vec![Reply::Int(2), Reply::Int(500)]),
            Reply::Array(vec![Reply::Int(1), Reply::Int(3000)]),
        ]);
        assert!(check(&family, now_us, now_us + 10, &pre, &reply, &post).is_err());
        let reply = Reply::Array(vec![
            Reply::Int(1),
            Reply::Int(500),
            Reply::Array(vec![Reply::Int(1), Reply::Int(500)]),
            Reply::Array(vec![Reply::Int(0), Reply::Int(-2)]),
        ]);
        assert_eq!(
            check(&family, now_us, now_us + 10, &pre, &reply, &pre),
            Ok(())
        );
    }

    /// Seed 9003 on Valkey 9.1: a window's key read alive by GET and gone by PEXPIRETIME (its
    /// expiry's millisecond passed between them); the call after them found it gone and began a
    /// window. Before, the read made it a key without an expiry, and the model counted 2.
    #[test]
    fn a_key_that_lapses_between_its_two_reads_is_gone_for_the_call() {
        let family = two_a_second();
        let now_us = 1_700_000_000_000_000;
        let now_ms = now_us / 1000;
        let pre = vec![bulk("1"), Reply::Int(-2)];
        let post = vec![bulk("1"), Reply::Int(now_ms + 1000)];
        let reply = Reply::Array(vec![Reply::Int(1), Reply::Int(1000)]);
        assert_eq!(
            check(&family, now_us, now_us + 50, &pre, &reply, &post),
            Ok(())
        );
        // Still a finding: counting on, a window the call found gone.
        let post = vec![bulk("2"), Reply::Int(now_ms + 1000)];
        let reply = Reply::Array(vec![Reply::Int(2), Reply::Int(1000)]);
        assert!(check(&family, now_us, now_us + 50, &pre, &reply, &post).is_err());
    }

    /// Seed 9002 on Redis 8.2: GOBLIN.INCREX counted in its key's last millisecond, keeping the
    /// expiry, and the key was gone by the read after it.
    #[test]
    fn a_count_kept_under_an_expiry_that_passes_may_be_gone_after() {
        let family = Family::Increx {
            key: b"k".to_vec(),
            seconds: 1,
            cost: 1,
            quota: 5,
        };
        let now_us = 1_700_000_000_000_000;
        let now_ms = now_us / 1000;
        let pre = vec![bulk("4"), Reply::Int(now_ms)];
        let post = vec![Reply::Nil, Reply::Int(-2)];
        assert_eq!(
            check(&family, now_us, now_us + 900, &pre, &Reply::Int(5), &post),
            Ok(())
        );
        // An expiry still ahead: gone after is a finding.
        let pre = vec![bulk("4"), Reply::Int(now_ms + 500)];
        assert!(check(&family, now_us, now_us + 900, &pre, &Reply::Int(5), &post).is_err());
    }
}
