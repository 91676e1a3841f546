//! One file per command, each in the shape of `crate::server::command::Command`: its spec, its
//! arguments, its parser and `run`, named after the command (`zwindow.rs` is GOBLIN.ZWINDOW), in
//! its family's folder, as `core/` decides them:
//!
//! | folder | commands | decides with (`goblin_core::`) |
//! |---|---|---|
//! | `locks/` | GOBLIN.LOCK, GOBLIN.BLOCK, GOBLIN.EXTEND, GOBLIN.CAD | `grant`, `waitlist` |
//! | `sliding/` | GOBLIN.ZWINDOW, GOBLIN.BZWINDOW, GOBLIN.ZWSTATS, GOBLIN.SWINDOW, GOBLIN.SWSTATS | `zwindow`, `grant`, `swindow` |
//! | `fixed/` | GOBLIN.INCREX, GOBLIN.FWINDOW, GOBLIN.FWSTATS, GOBLIN.MFWINDOW | `increx`, `fwindow` |
//! | `throttles/` | GOBLIN.GCRA, GOBLIN.MGCRA | `gcra`, `mgcra` |
//! | `rwlock/` | GOBLIN.RLOCK, GOBLIN.WLOCK, GOBLIN.BRLOCK, GOBLIN.BWLOCK, GOBLIN.RWEXTEND, GOBLIN.RWUNLOCK, GOBLIN.RWHELD | `rwlock`, `waitlist` |
//! | `native/` | the stand-ins for newer servers' commands: INCREX, DELEX, DIGEST, DELIFEQ | `native` |
//!
//! A command's file imports no other command's: what a family shares is its folder's
//! `mod.rs`; what families share is here (the `FENCE`, `PERMITS` and `SEPARATOR` arguments,
//! the counted groups of several keys).

pub mod fixed;
pub mod locks;
pub mod native;
pub mod rwlock;
pub mod sliding;
pub mod throttles;

use std::collections::HashMap;
use std::ffi::CStr;

use goblin_core::zwindow::MOST_PERMITS;
use smallvec::SmallVec;

use crate::error::zwindow::TOO_MANY_PERMITS;
use crate::error::CommandError;
use crate::fencing;
use crate::grant::Permits;
use crate::server::command::ArgDoc;
use crate::server::stats::Counter;
use crate::server::{Arg, Args, Reply};

/// `FENCE`, which replies a fencing token (`crate::fencing`): `summary` says instead of what;
/// `added`, the version that brought it to a command that came before it.
pub(crate) const fn fence_arg(summary: &'static CStr, added: Option<&'static CStr>) -> ArgDoc {
    let fence = ArgDoc::pure_token(c"fence", "FENCE")
        .summary(summary)
        .optional();
    match added {
        Some(version) => fence.since(version),
        None => fence,
    }
}

/// `PERMITS permits` (since 0.4.0): a holder of several slots.
pub(crate) const fn permits_arg(summary: &'static CStr) -> ArgDoc {
    ArgDoc::integer(c"permits")
        .token("PERMITS")
        .since(c"0.4.0")
        .summary(summary)
        .optional()
}

/// `SEPARATOR separator` (since 0.4.0): how a holder's slots are named.
pub(crate) const fn separator_arg(summary: &'static CStr) -> ArgDoc {
    ArgDoc::string(c"separator")
        .token("SEPARATOR")
        .since(c"0.4.0")
        .summary(summary)
        .optional()
}

/// `PERMITS n` and `SEPARATOR sep` as the lease commands parse them: each once, in any order
/// among their other options.
#[derive(Default)]
pub(crate) struct PermitOptions<'call> {
    count: Option<usize>,
    separator: Option<Arg<'call>>,
}

impl<'call> PermitOptions<'call> {
    /// Takes `option value` if it is `PERMITS n` or `SEPARATOR sep`, not given before: whether
    /// it was one of them.
    pub fn take(&mut self, option: Arg<'_>, value: Arg<'call>) -> Result<bool, CommandError> {
        if option.is("PERMITS") && self.count.is_none() {
            self.count = Some(permit_count(value)?);
            Ok(true)
        } else if option.is("SEPARATOR") && self.separator.is_none() {
            self.separator = Some(value);
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Whether either was given.
    pub fn given(&self) -> bool {
        self.count.is_some() || self.separator.is_some()
    }

    /// The request's slots: 1 without `PERMITS`.
    pub fn permits(self) -> Permits<'call> {
        Permits {
            count: self.count.unwrap_or(1),
            separator: self.separator.map(Arg::as_bytes),
        }
    }
}

/// `PERMITS n`: at least 1, as COST's count.
fn permit_count(arg: Arg<'_>) -> Result<usize, CommandError> {
    let n = arg.to_count()?;
    usize::try_from(n)
        .ok()
        .filter(|&n| n <= MOST_PERMITS)
        .ok_or(TOO_MANY_PERMITS)
}

/// As many keys as a multi-key call usually names, kept on the stack.
pub(crate) const INLINE: usize = 4;

/// The distinct keys of a command that names several (GOBLIN.MGCRA, GOBLIN.MFWINDOW), and where
/// each of its groups' key is among them, added when it is new. Linear for the few a call
/// usually names, a map beyond.
struct KeyIndex<'call> {
    keys: SmallVec<[Arg<'call>; INLINE]>,
    /// Each key's bytes, read once (each read is a call into the server).
    names: SmallVec<[&'call [u8]; INLINE]>,
    map: Option<HashMap<&'call [u8], usize>>,
    /// The call names one group, so one key.
    single: bool,
}

impl<'call> KeyIndex<'call> {
    const LINEAR: usize = 8;

    fn new(policies: usize) -> Self {
        // On the stack for the few keys a call usually names, grown past them as they come.
        KeyIndex {
            keys: SmallVec::new(),
            names: SmallVec::new(),
            map: (policies > Self::LINEAR).then(HashMap::new),
            single: policies == 1,
        }
    }

    fn index(&mut self, key: Arg<'call>) -> usize {
        let next = self.keys.len();
        // A call of one group has nothing to compare its key with: its bytes are not read.
        if self.single {
            self.keys.push(key);
            return next;
        }
        let name = key.as_bytes();
        let found = match &mut self.map {
            Some(map) => *map.entry(name).or_insert(next),
            // Keys under one hash tag mostly differ in their last byte: looked at first.
            None => self
                .names
                .iter()
                .position(|known| known.last() == name.last() && *known == name)
                .unwrap_or(next),
        };
        if found == next {
            self.keys.push(key);
            self.names.push(name);
        }
        found
    }
}

/// The groups of a command that counts them first: its distinct keys, each once in the order
/// first named, and its groups, each with its key's index among them.
pub(crate) struct Counted<'call, G> {
    pub keys: SmallVec<[Arg<'call>; INLINE]>,
    pub groups: SmallVec<[G; INLINE]>,
}

/// The groups of a command that counts them first, as ZUNION counts its `numkeys`
/// (GOBLIN.MFWINDOW's windows, GOBLIN.MGCRA's policies): the count, at least 1 (`none` is its
/// error otherwise), and no more groups of `words` arguments, each its key first, than the call
/// holds (a syntax error, as ZUNION's). Then each group: its key's index among the distinct
/// keys, and the rest of its arguments, read by `group`.
pub(crate) fn counted_groups<'call, G>(
    args: &mut Args<'_, 'call>,
    words: usize,
    none: CommandError,
    group: impl FnMut(usize, &mut Args<'_, 'call>) -> Result<G, CommandError>,
) -> Result<Counted<'call, G>, CommandError> {
    let count = group_count(args, words, none)?;
    groups_of(args, count, group)
}

/// `count` groups, each its key first, the rest read by `group`: `counted_groups`' reading once
/// the count is read (`group_count`).
pub(crate) fn groups_of<'call, G>(
    args: &mut Args<'_, 'call>,
    count: usize,
    mut group: impl FnMut(usize, &mut Args<'_, 'call>) -> Result<G, CommandError>,
) -> Result<Counted<'call, G>, CommandError> {
    let mut index = KeyIndex::new(count);
    let mut groups = SmallVec::with_capacity(count);
    for _ in 0..count {
        let key = index.index(args.next()?);
        groups.push(group(key, args)?);
    }
    Ok(Counted {
        keys: index.keys,
        groups,
    })
}

/// The count of a command that counts its groups first, checked as `counted_groups` checks
/// it, for a command that reads one group its own way.
pub(crate) fn group_count(
    args: &mut Args<'_, '_>,
    words: usize,
    none: CommandError,
) -> Result<usize, CommandError> {
    let count = args.next()?.to_i64().ok_or(CommandError::NotInteger)?;
    let count = usize::try_from(count)
        .ok()
        .filter(|count| *count > 0)
        .ok_or(none)?;
    if count
        .checked_mul(words)
        .is_none_or(|needed| needed > args.remaining())
    {
        return Err(CommandError::Syntax);
    }
    Ok(count)
}

/// `key token milliseconds [REPLACE] [FENCE]`, as the extends take them (GOBLIN.EXTEND,
/// GOBLIN.RWEXTEND).
pub struct ExtendArgs<'call> {
    pub key: Arg<'call>,
    pub token: Arg<'call>,
    /// At least 1: a time that is not positive is an error, never a release.
    pub ms: i64,
    /// `REPLACE`: the lease ends `ms` from now, instead of `ms` later.
    pub replace: bool,
    /// `FENCE`: reply the holder's fencing token, its expiry moved with the lease.
    pub fence: bool,
}

/// Reads `key token milliseconds`, then `REPLACE` and `FENCE`, each once, in either order
/// (`FENCE` checked with the key, before anything is read).
pub(crate) fn parse_extend<'call>(
    mut args: Args<'_, 'call>,
) -> Result<ExtendArgs<'call>, CommandError> {
    let (key, token) = (args.next()?, args.next()?);
    let ms = lease_ms(args.next()?)?;
    let (mut replace, mut fence) = (false, false);
    for option in args.rest() {
        if option.is("REPLACE") && !replace {
            replace = true;
        } else if option.is("FENCE") && !fence {
            fencing::nameable(key)?;
            fence = true;
        } else {
            return Err(CommandError::Syntax);
        }
    }
    Ok(ExtendArgs {
        key,
        token,
        ms,
        replace,
        fence,
    })
}

/// The extends' arguments, as COMMAND DOCS gives them; `fence_added`: the version that brought
/// `FENCE` to a command that came before it.
pub(crate) const fn extend_args(fence_added: Option<&'static CStr>) -> [ArgDoc; 5] {
    [
        ArgDoc::key(c"key"),
        ArgDoc::string(c"token"),
        ArgDoc::integer(c"milliseconds"),
        ArgDoc::pure_token(c"replace", "REPLACE")
            .summary(c"The lease ends milliseconds from now, instead of milliseconds later.")
            .optional(),
        fence_arg(
            c"Reply the holder's fencing token instead of 1.",
            fence_added,
        ),
    ]
}

/// A trailing `FENCE`, once, and nothing else; checked with the key, before anything is read.
/// Most calls have none: that is answered inline.
#[inline]
pub fn fence_option(key: Arg<'_>, rest: &[Arg<'_>]) -> Result<bool, CommandError> {
    if rest.is_empty() {
        return Ok(false);
    }
    fence_given(key, rest)
}

/// `fence_option` for a call with arguments left.
fn fence_given(key: Arg<'_>, rest: &[Arg<'_>]) -> Result<bool, CommandError> {
    match rest {
        [] => Ok(false),
        [option] if option.is("FENCE") => {
            fencing::nameable(key)?;
            Ok(true)
        }
        _ => Err(CommandError::Syntax),
    }
}

/// An acquire's reply in its command's counters: a grant as `acquired`; a wait in line as
/// `waited`, and nil (not now) as `refused`, where the command counts them.
pub(crate) fn tally(
    reply: &Reply<'_>,
    acquired: &Counter,
    waited: Option<&Counter>,
    refused: Option<&Counter>,
) {
    let counter = match reply {
        Reply::Blocked => waited,
        Reply::Null => refused,
        _ => Some(acquired),
    };
    if let Some(counter) = counter {
        counter.add(1);
    }
}

/// A grant's reply: `OK`, or its fencing token.
pub fn granted(token: Option<i64>) -> Reply<'static> {
    match token {
        Some(token) => Reply::Int(token),
        None => Reply::Status(c"OK"),
    }
}

/// The lease: milliseconds, at least 1, as SET's PX takes them.
pub fn lease_ms(arg: Arg<'_>) -> Result<i64, CommandError> {
    lease_of(arg.to_i64())
}

/// The lease of an argument read as an integer (`Arg::to_i64`), as [`lease_ms`] takes it.
pub fn lease_of(read: Option<i64>) -> Result<i64, CommandError> {
    match read {
        None => Err(CommandError::NotInteger),
        Some(ms) if ms <= 0 => Err(CommandError::InvalidExpire),
        Some(ms) => Ok(ms),
    }
}
