//! The lock keys the workers hold and wait for, the commands for each, how a reply says a
//! grant, and the model of one step: a call that does not wait is sent as `TIME, GET k, ZRANGE
//! k 0 -1 WITHSCORES, PTTL k, call, (the same reads), TIME`, so what it saw is known, and
//! `goblin_core`'s grant rules (`grant::take`, `rwlock::take`, `zwindow::holds`) say whether it
//! had to grant, refuse, extend or release. A blocking call has no such step: what it met when
//! its turn came is for the history's checkers (`crate::checks`).

use goblin_core::grant::{self, LockKey, Take};
use goblin_core::rwlock::{self, Holders, Mode as RwMode};

use crate::history::{Acquire, Extend, Mode, Release, What};
use crate::wire::{cmd, Command, Reply, ReplyExt};

/// What a lock key is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// GOBLIN.LOCK's token lock.
    Token,
    /// The readers-writer lock.
    ReadWrite,
    /// A GOBLIN.ZWINDOW lease of `window_ms` with `limit` holders.
    Lease { window_ms: i64, limit: i64 },
}

#[derive(Debug, Clone, PartialEq)]
pub struct LockKeyDef {
    pub name: Vec<u8>,
    pub kind: Kind,
}

/// The campaign's lock keys, each with a hash tag of its own (a cluster spreads them).
pub fn catalog(tag: &str) -> Vec<LockKeyDef> {
    let key = |slot: &str, name: &str| format!("{{{tag}{slot}}}{name}").into_bytes();
    vec![
        LockKeyDef {
            name: key("t1", "lock"),
            kind: Kind::Token,
        },
        LockKeyDef {
            name: key("t2", "lock"),
            kind: Kind::Token,
        },
        LockKeyDef {
            name: key("r1", "rw"),
            kind: Kind::ReadWrite,
        },
        LockKeyDef {
            name: key("z1", "mutex"),
            kind: Kind::Lease {
                window_ms: 2000,
                limit: 1,
            },
        },
        LockKeyDef {
            name: key("z2", "sem"),
            kind: Kind::Lease {
                window_ms: 2000,
                limit: 2,
            },
        },
    ]
}

fn text(n: i64) -> Vec<u8> {
    n.to_string().into_bytes()
}

/// A timeout in seconds as the blocking commands read it.
fn seconds(ms: i64) -> Vec<u8> {
    format!("{:.3}", ms as f64 / 1000.0).into_bytes()
}

/// The command of an acquire.
pub fn acquire_command(def: &LockKeyDef, a: &Acquire) -> Command {
    let mut words: Vec<Vec<u8>> = match (def.kind, a.mode, a.timeout_ms) {
        (Kind::Lease { limit, .. }, _, None) => vec![
            b"GOBLIN.ZWINDOW".to_vec(),
            a.key.clone(),
            b"*".to_vec(),
            seconds(a.ms),
            text(limit),
            a.token.clone(),
        ],
        (Kind::Lease { limit, .. }, _, Some(timeout)) => vec![
            b"GOBLIN.BZWINDOW".to_vec(),
            a.key.clone(),
            seconds(a.ms),
            text(limit),
            a.token.clone(),
            seconds(timeout),
        ],
        (_, mode, timeout) => {
            let name: &[u8] = match (mode, timeout.is_some()) {
                (Mode::Lock, false) => b"GOBLIN.LOCK",
                (Mode::Lock, true) => b"GOBLIN.BLOCK",
                (Mode::Write, false) => b"GOBLIN.WLOCK",
                (Mode::Write, true) => b"GOBLIN.BWLOCK",
                (_, false) => b"GOBLIN.RLOCK",
                (_, true) => b"GOBLIN.BRLOCK",
            };
            let mut words = vec![name.to_vec(), a.key.clone(), a.token.clone(), text(a.ms)];
            if let Some(timeout) = timeout {
                words.push(seconds(timeout));
            }
            words
        }
    };
    if a.fence {
        words.push(b"FENCE".to_vec());
    }
    words
}

pub fn extend_command(def: &LockKeyDef, e: &Extend) -> Command {
    let mut words = match def.kind {
        Kind::Lease { limit, .. } => vec![
            b"GOBLIN.ZWINDOW".to_vec(),
            e.key.clone(),
            b"*".to_vec(),
            seconds(e.ms),
            text(limit),
            e.token.clone(),
            b"XX".to_vec(),
        ],
        Kind::Token => vec![
            b"GOBLIN.EXTEND".to_vec(),
            e.key.clone(),
            e.token.clone(),
            text(e.ms),
        ],
        Kind::ReadWrite => vec![
            b"GOBLIN.RWEXTEND".to_vec(),
            e.key.clone(),
            e.token.clone(),
            text(e.ms),
        ],
    };
    if e.replace && !matches!(def.kind, Kind::Lease { .. }) {
        words.push(b"REPLACE".to_vec());
    }
    if e.fence {
        words.push(b"FENCE".to_vec());
    }
    words
}

/// How a release is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleaseBy {
    Cad,
    Rwunlock,
    Delifeq,
    DelexIfeq,
}

pub fn release_command(r: &Release, by: ReleaseBy) -> Command {
    match by {
        ReleaseBy::Cad => cmd(&[b"GOBLIN.CAD".as_slice(), &r.key, &r.token]),
        ReleaseBy::Rwunlock => cmd(&[b"GOBLIN.RWUNLOCK".as_slice(), &r.key, &r.token]),
        ReleaseBy::Delifeq => cmd(&[b"DELIFEQ".as_slice(), &r.key, &r.token]),
        ReleaseBy::DelexIfeq => cmd(&[b"DELEX".as_slice(), &r.key, b"IFEQ", &r.token]),
    }
}

/// The reads of a lock key a step makes before and after its call.
pub fn reads(key: &[u8]) -> Vec<Command> {
    vec![
        cmd(&[b"GET".as_slice(), key]),
        cmd(&[b"ZRANGE".as_slice(), key, b"0", b"-1", b"WITHSCORES"]),
        cmd(&[b"PTTL".as_slice(), key]),
    ]
}

/// A step's pipeline around `call` on `key`.
pub fn step(key: &[u8], call: Command) -> Vec<Command> {
    let mut commands = vec![cmd(&["TIME"])];
    commands.extend(reads(key));
    commands.push(call);
    commands.extend(reads(key));
    commands.push(cmd(&["TIME"]));
    commands
}

/// A probe: who holds `key`, with the clock around it (`PING` stands where a step's call
/// would, so that a probe splits as a step does: its reads are those before).
pub fn probe(key: &[u8]) -> Vec<Command> {
    let mut commands = vec![cmd(&["TIME"])];
    commands.extend(reads(key));
    commands.push(cmd(&["PING"]));
    commands.push(cmd(&["TIME"]));
    commands
}

/// A lock key as three reads saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum State {
    Missing,
    /// A string (a token lock or the writer): its value and milliseconds left (-1: none).
    Token {
        value: Vec<u8>,
        pttl: i64,
    },
    /// A sorted set (readers or lease holders): members and scores.
    Set {
        members: Vec<(Vec<u8>, f64)>,
        pttl: i64,
    },
    Other,
}

impl State {
    pub fn read(replies: &[Reply]) -> Option<State> {
        let [get, zrange, pttl] = replies else {
            return None;
        };
        let pttl = pttl.as_int().unwrap_or(-2);
        Some(match (get, zrange) {
            (Reply::Nil, Reply::Array(items)) if items.is_empty() => State::Missing,
            (Reply::Bulk(value), _) => State::Token {
                value: value.clone(),
                pttl,
            },
            (Reply::Error(_), Reply::Array(items)) => State::Set {
                members: items
                    .chunks(2)
                    .filter_map(|pair| {
                        let member = pair.first()?.as_bytes()?.to_vec();
                        let score = pair.get(1)?.as_text()?.parse::<f64>().ok()?;
                        Some((member, score))
                    })
                    .collect(),
                pttl,
            },
            _ => State::Other,
        })
    }

    /// Whether `token` holds the key at `now_ms`, for a key of `kind`: `Some(true|false)`, or
    /// `None` where the millisecond decides and the call's is not known well enough.
    pub fn held_by(&self, token: &[u8], kind: Kind, lo_ms: i64, hi_ms: i64) -> Option<bool> {
        match self {
            State::Missing | State::Other => Some(false),
            State::Token { value, pttl } => {
                if value != token {
                    Some(false)
                } else if *pttl == -1 || *pttl > 2 + (hi_ms - lo_ms) {
                    Some(true)
                } else {
                    None
                }
            }
            State::Set { members, .. } => {
                let Some((_, score)) = members.iter().find(|(m, _)| m == token) else {
                    return Some(false);
                };
                let ends_ms = match kind {
                    // A read lease runs through the millisecond it ends.
                    Kind::ReadWrite | Kind::Token => *score as i64 + 1,
                    // A lease member is inside its window while now < score + window.
                    Kind::Lease { window_ms, .. } => (score * 1000.0).round() as i64 + window_ms,
                };
                if ends_ms > hi_ms + 2 {
                    Some(true)
                } else if ends_ms <= lo_ms - 2 {
                    Some(false)
                } else {
                    None
                }
            }
        }
    }

    /// The holders of the key at `now_ms` (tokens), for the checkers' probes.
    pub fn holders(&self, kind: Kind, now_ms: i64) -> Vec<Vec<u8>> {
        match self {
            State::Token { value, .. } => vec![value.clone()],
            State::Set { members, .. } => members
                .iter()
                .filter(|(member, _)| self.held_by(member, kind, now_ms, now_ms) == Some(true))
                .map(|(member, _)| member.clone())
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// What a reply says of a grant: `Some(token)` granted (the fencing token, if it asked for
/// one), `None` not granted; an error is neither (`Err`).
pub fn granted(reply: &Reply, fence: bool) -> Result<Option<Option<i64>>, String> {
    match reply {
        Reply::Status(ok) if ok == "OK" => Ok(Some(None)),
        Reply::Int(0) | Reply::Nil | Reply::Null => Ok(None),
        Reply::Int(n) if fence && *n > 1 => Ok(Some(Some(*n))),
        Reply::Int(1) => Ok(Some(None)),
        Reply::Error(e) => Err(e.clone()),
        other => Err(format!("an unexpected reply {other:?}")),
    }
}

/// The step's verdict for a call that does not wait: `Ok` where the reply is what the grant
/// rules allow given what the reads before it saw, else why not. `None` from a read means the
/// step says nothing (another type at the key, a millisecond too close to call).
pub fn check_step(
    what: &What,
    kind: Kind,
    lo_us: i64,
    hi_us: i64,
    pre: &[Reply],
    reply: &Reply,
) -> Result<(), String> {
    let (lo_ms, hi_ms) = (lo_us.div_euclid(1000), hi_us.div_euclid(1000));
    let Some(before) = State::read(pre) else {
        return Ok(());
    };
    if before == State::Other {
        return Ok(());
    }
    match what {
        What::Extend(e) => {
            let Some(held) = before.held_by(&e.token, kind, lo_ms, hi_ms) else {
                return Ok(());
            };
            // GOBLIN.EXTEND extends a lease only (a lock without a TTL is no lease).
            let held = held
                && !(matches!(kind, Kind::Token)
                    && matches!(before, State::Token { pttl: -1, .. }));
            if matches!(kind, Kind::Token) && matches!(before, State::Set { .. }) {
                return expect_error(reply, "WRONGTYPE", "GOBLIN.EXTEND on a sorted set");
            }
            match granted(reply, e.fence) {
                Ok(done) if done.is_some() == held => Ok(()),
                Ok(done) => Err(format!(
                    "{} by {} answered {}, but {} held the key before it ({before:?})",
                    if matches!(kind, Kind::Lease { .. }) {
                        "a renewal (XX)"
                    } else {
                        "an extend"
                    },
                    String::from_utf8_lossy(&e.token),
                    if done.is_some() { "done" } else { "not held" },
                    if held { "it" } else { "it never" },
                )),
                // An error (out of memory, a clock behind, an internal error) is not the grant
                // rules' to judge: the other checkers see it.
                Err(_) => Ok(()),
            }
        }
        What::Release(r) => {
            // A key in its last milliseconds may expire before the release reads it.
            let expiring = |pttl: i64| pttl == -2 || (0..=2 + hi_ms - lo_ms).contains(&pttl);
            if matches!(&before, State::Token { pttl, .. } | State::Set { pttl, .. } if expiring(*pttl))
            {
                return Ok(());
            }
            let held = match (&before, kind) {
                // GOBLIN.CAD and the value-checked deletes compare the value alone.
                (State::Token { value, .. }, _) if r.mode != Mode::Read => Some(*value == r.token),
                (State::Set { members, .. }, Kind::Lease { .. }) => {
                    Some(members.iter().any(|(m, _)| *m == r.token))
                }
                _ => before.held_by(&r.token, kind, lo_ms, hi_ms),
            };
            let Some(held) = held else {
                return Ok(());
            };
            match reply.as_int() {
                Some(n) if (n == 1) == held => Ok(()),
                Some(n) => Err(format!(
                    "a release by {} answered {n}, but the key before it was {before:?}",
                    String::from_utf8_lossy(&r.token)
                )),
                None => match reply {
                    Reply::Error(_) => Ok(()),
                    other => Err(format!("a release answered {other:?}")),
                },
            }
        }
        What::Acquire(a) if a.timeout_ms.is_none() => {
            check_acquire(a, kind, &before, lo_ms, hi_ms, reply)
        }
        _ => Ok(()),
    }
}

fn expect_error(reply: &Reply, prefix: &str, what: &str) -> Result<(), String> {
    match reply {
        Reply::Error(e) if e.starts_with(prefix) => Ok(()),
        other => Err(format!("{what} answered {other:?}, not {prefix}")),
    }
}

/// A call that does not wait: granted only where the key let it in; refused where nothing but
/// a waiter could have kept it out is allowed (who waits is not read in the step).
fn check_acquire(
    a: &Acquire,
    kind: Kind,
    before: &State,
    lo_ms: i64,
    hi_ms: i64,
    reply: &Reply,
) -> Result<(), String> {
    let got = match granted(reply, a.fence) {
        Ok(got) => got.is_some(),
        // Errors (out of memory, a clock behind) are the other checkers' to judge.
        Err(_) => return Ok(()),
    };
    // (may it be granted, must it be granted whoever waits)
    let (may, must) = match kind {
        Kind::Token => match before {
            State::Missing => (true, false),
            // A key in its last milliseconds (or gone between two reads) may expire first.
            State::Token { pttl, .. } if *pttl == -2 || (0..=2 + hi_ms - lo_ms).contains(pttl) => {
                return Ok(())
            }
            State::Token { value, .. } => match grant::take(LockKey::String(value), &a.token) {
                Take::Takes => (true, true),
                _ => (false, false),
            },
            _ => return Ok(()),
        },
        Kind::ReadWrite => {
            let mode = if a.mode == Mode::Read {
                RwMode::Read
            } else {
                RwMode::Write
            };
            let holders = match before {
                State::Missing => Holders::Free,
                State::Token { value, pttl } => {
                    if *pttl >= 0 && *pttl <= 2 + (hi_ms - lo_ms) {
                        return Ok(());
                    }
                    Holders::Writer {
                        caller: *value == a.token,
                    }
                }
                State::Set { members, .. } => {
                    let mut live = 0;
                    let mut caller = false;
                    for (member, _) in members {
                        match before.held_by(member, kind, lo_ms, hi_ms) {
                            None => return Ok(()),
                            Some(true) => {
                                live += 1;
                                caller |= *member == a.token;
                            }
                            Some(false) => {}
                        }
                    }
                    Holders::Readers {
                        live: live.min(rwlock::COUNTED),
                        caller,
                    }
                }
                State::Other => return Ok(()),
            };
            let alone = rwlock::take(mode, holders, false).ok().flatten().is_some();
            let behind = rwlock::take(mode, holders, true).ok().flatten().is_some();
            (alone, behind)
        }
        Kind::Lease { limit, .. } => match before {
            State::Missing => (true, false),
            State::Set { members, .. } => {
                let mut inside = 0;
                let mut own = false;
                for (member, _) in members {
                    match before.held_by(member, kind, lo_ms, hi_ms) {
                        None => return Ok(()),
                        Some(true) => {
                            inside += 1;
                            own |= *member == a.token;
                        }
                        Some(false) => {}
                    }
                }
                if own {
                    (true, true)
                } else {
                    (inside < limit, false)
                }
            }
            _ => return Ok(()),
        },
    };
    if got && !may {
        return Err(format!(
            "{} granted to {} while the key was {before:?}: a grant while held",
            mode_name(a.mode),
            String::from_utf8_lossy(&a.token)
        ));
    }
    if !got && must {
        return Err(format!(
            "{} refused to {}, which held the key already ({before:?}): a holder asking again waits for nobody",
            mode_name(a.mode),
            String::from_utf8_lossy(&a.token)
        ));
    }
    Ok(())
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Lock => "a lock",
        Mode::Write => "a write lock",
        Mode::Read => "a read lock",
        Mode::Lease => "a lease",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(value: &str, pttl: i64) -> Vec<Reply> {
        vec![
            Reply::Bulk(value.as_bytes().to_vec()),
            Reply::Error("WRONGTYPE".into()),
            Reply::Int(pttl),
        ]
    }

    /// Whether the step is a finding: `what`, over 10 µs, on a key that read `before`.
    fn found(what: &What, before: &[Reply], reply: &Reply) -> bool {
        let def = catalog("x")[0].clone();
        let now = 1_700_000_000_000_000;
        check_step(what, def.kind, now, now + 10, before, reply).is_err()
    }

    fn free() -> Vec<Reply> {
        vec![Reply::Nil, Reply::Array(vec![]), Reply::Int(-2)]
    }

    #[test]
    fn an_extend_by_another_token_must_answer_0() {
        let extend = What::Extend(Extend {
            key: catalog("x")[0].name.clone(),
            token: b"b".to_vec(),
            mode: Mode::Lock,
            ms: 100,
            replace: false,
            fence: false,
        });
        // (the key held by, for ms; the reply; a finding)
        let steps = [
            (("a", 5000), Reply::Int(1), true),
            (("a", 5000), Reply::Int(0), false),
            (("b", 5000), Reply::Int(1), false),
            // Too close to its end to tell.
            (("b", 1), Reply::Int(0), false),
        ];
        for ((holder, pttl), reply, finding) in steps {
            assert_eq!(
                found(&extend, &token(holder, pttl), &reply),
                finding,
                "held by {holder} for {pttl} ms, answered {reply:?}"
            );
        }
    }

    #[test]
    fn a_lock_granted_while_held_is_a_finding() {
        let lock = What::Acquire(Acquire {
            key: catalog("x")[0].name.clone(),
            token: b"b".to_vec(),
            mode: Mode::Lock,
            ms: 100,
            fence: false,
            timeout_ms: None,
            renewal: false,
            switch: false,
        });
        let ok = Reply::Status("OK".into());
        // (the key before; the reply; a finding)
        let steps = [
            (token("a", 5000), ok.clone(), true),
            (token("a", 5000), Reply::Nil, false),
            (free(), ok, false),
            (free(), Reply::Nil, false),
            // Its own holder asking again must be let in: a refusal is a finding.
            (token("b", 5000), Reply::Nil, true),
        ];
        for (before, reply, finding) in steps {
            assert_eq!(
                found(&lock, &before, &reply),
                finding,
                "{before:?}, answered {reply:?}"
            );
        }
    }
}
