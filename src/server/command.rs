//! The one shape of every command: a `Spec` that describes it once (name, flags, ACL
//! categories, how it uses its key, its arguments, from which the arity follows, and where its
//! calls are counted), a parser from the arguments to a typed struct, and `run`.

use std::ffi::CStr;

use super::error::CommandError;
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, Reply};

/// A command of the module.
pub trait Command {
    /// Everything the server, `COMMAND DOCS` and `INFO goblin` are told about it.
    const SPEC: &'static Spec;
    /// The arguments, parsed and validated: a command writes nothing before it has them.
    type Args<'call>;
    /// Reads the arguments after the name, left to right.
    fn parse<'call>(args: Args<'_, 'call>) -> Result<Self::Args<'call>, CommandError>;
    /// Runs one call.
    fn run<'call>(ctx: &'call Ctx, args: Self::Args<'call>) -> Result<Reply<'call>, CommandError>;
}

pub struct Spec {
    /// Lower case, as registered and as quoted in error replies.
    pub name: &'static CStr,
    /// Command flags, as `RedisModule_CreateCommand` takes them.
    pub flags: &'static CStr,
    /// ACL categories, set where the server has module ACL categories (Redis >= 7.2, Valkey).
    /// The server derives `@fast` / `@slow` only for its own commands, so they are spelled out.
    pub acl_categories: &'static CStr,
    pub summary: &'static CStr,
    pub complexity: &'static CStr,
    pub since: &'static CStr,
    /// Where the keys are, and how they are used.
    pub keys: Keys,
    /// Every argument after the name, the key first.
    pub args: &'static [ArgDoc],
    /// Its calls and errors, for `INFO goblin`.
    pub stats: &'static CommandStats,
    /// The prefix of its `INFO goblin` fields (`<prefix>_calls`, `<prefix>_errors`, ...).
    pub info_name: &'static str,
    /// Its own `INFO goblin` fields after calls and errors: (name after the prefix, counter).
    pub outcomes: &'static [(&'static str, &'static Counter)],
    /// A stand-in for a native command of newer servers: registered only where the server
    /// lacks a command of that name, and not at all with the module argument `no-stand-ins`.
    pub stand_in: bool,
}

impl Spec {
    /// The arity the server checks before the call: the name and every argument when all are
    /// required and single, otherwise minus the name and the required ones.
    pub const fn arity(&self) -> i32 {
        let mut words = 1;
        let mut fixed = true;
        let mut i = 0;
        while i < self.args.len() {
            let arg = &self.args[i];
            match arg.words() {
                Some(count) if !arg.optional && !arg.multiple => words += count,
                // A required argument that may repeat is there at least once.
                Some(count) if !arg.optional => {
                    words += count;
                    fixed = false;
                }
                _ => fixed = false,
            }
            i += 1;
        }
        if fixed {
            words
        } else {
            -words
        }
    }
}

/// Where a command's keys are in its arguments.
#[derive(Clone, Copy)]
pub enum Keys {
    /// One key, the first argument.
    One(KeyAccess),
    /// As `numkeys` says (ZUNION's key spec): the argument at `count_at` counts groups of
    /// `step` arguments that follow it, each group's first argument a key (GOBLIN.MGCRA's
    /// `numpolicies key max_burst tokens_per_period period ...`). The server then finds them
    /// per call (movable keys), for the cluster's slot checks and for ACL.
    Counted {
        access: KeyAccess,
        count_at: i32,
        step: i32,
    },
}

impl Keys {
    /// How every key is used.
    pub const fn access(&self) -> KeyAccess {
        match *self {
            Keys::One(access) | Keys::Counted { access, .. } => access,
        }
    }

    /// Whether the server must ask the command for its keys on each call (`getkeys-api`). The
    /// servers route a cluster's commands by their legacy key range or by asking the command,
    /// never by key specs, so keys found per call must be answered for.
    pub const fn asked_per_call(&self) -> bool {
        matches!(
            self,
            Keys::Counted { .. } | Keys::One(KeyAccess::PerCall(_))
        )
    }

    /// Each key's position in `argv` (the name at 0), with its access, handed to `key`: what
    /// the command answers when the server asks (per call, on Redis 8.10 before every call).
    /// A count that is not a positive integer, or that runs past the arguments, names the keys
    /// there are (the call then fails as it parses).
    pub fn each_position(&self, argv: &[Arg<'_>], mut key: impl FnMut(usize, KeyAccess)) {
        match *self {
            Keys::One(KeyAccess::PerCall(flags_of)) => key(1, flags_of(argv)),
            Keys::One(access) => key(1, access),
            Keys::Counted {
                access,
                count_at,
                step,
            } => {
                let (count_at, step) = (count_at.max(0) as usize, step.max(1) as usize);
                let count = argv
                    .get(count_at)
                    .and_then(|count| count.to_i64())
                    .and_then(|count| usize::try_from(count).ok())
                    .unwrap_or(0);
                for position in (count_at + 1..argv.len()).step_by(step).take(count) {
                    key(position, access);
                }
            }
        }
    }
}

/// How a command uses its key: the flags of its key spec (what ACL key patterns, cluster
/// routing and `COMMAND GETKEYSANDFLAGS` see).
#[derive(Clone, Copy)]
pub enum KeyAccess {
    /// RW ACCESS UPDATE: reads the value and updates it (INCR's and ZADD's access). The server
    /// allows one of update, insert and delete per key spec, so ZWINDOW, which can also empty
    /// its set by eviction, declares its main access.
    ReadUpdate,
    /// RW ACCESS DELETE: reads, and may delete (a release).
    ReadDelete,
    /// RO ACCESS: reads only.
    Read,
    /// RM DELETE: may delete, without reading the value out (DEL's access).
    Remove,
    /// RW DELETE: compares the value, and may delete it.
    CompareDelete,
    /// Depends on the call: the key spec says RW DELETE with variable flags, the command is
    /// registered with `getkeys-api`, and the server asks this function for each call's flags.
    PerCall(fn(&[Arg<'_>]) -> KeyAccess),
}

/// One argument in `COMMAND DOCS`: a tree, as the server's own commands describe theirs.
#[derive(Clone, Copy)]
pub struct ArgDoc {
    pub name: &'static CStr,
    pub kind: ArgKind,
    /// The keyword before the value (`BYINT`), or the whole argument for a pure token.
    pub token: Option<&'static str>,
    pub summary: Option<&'static CStr>,
    /// The Goblin release that added an argument to a command older than it.
    pub since: Option<&'static CStr>,
    pub optional: bool,
    pub multiple: bool,
    /// The alternatives of a `OneOf`, the parts of a `Block`.
    pub children: &'static [ArgDoc],
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ArgKind {
    Key,
    String,
    Integer,
    Double,
    UnixTime,
    /// A keyword alone (`SATURATE`).
    PureToken,
    /// One of the children.
    OneOf,
    /// The children, in order (a policy of GOBLIN.MGCRA).
    Block,
}

impl ArgDoc {
    const fn new(name: &'static CStr, kind: ArgKind) -> ArgDoc {
        ArgDoc {
            name,
            kind,
            token: None,
            summary: None,
            since: None,
            optional: false,
            multiple: false,
            children: &[],
        }
    }

    pub const fn key(name: &'static CStr) -> ArgDoc {
        ArgDoc::new(name, ArgKind::Key)
    }
    pub const fn string(name: &'static CStr) -> ArgDoc {
        ArgDoc::new(name, ArgKind::String)
    }
    pub const fn integer(name: &'static CStr) -> ArgDoc {
        ArgDoc::new(name, ArgKind::Integer)
    }
    pub const fn double(name: &'static CStr) -> ArgDoc {
        ArgDoc::new(name, ArgKind::Double)
    }
    pub const fn unix_time(name: &'static CStr) -> ArgDoc {
        ArgDoc::new(name, ArgKind::UnixTime)
    }
    /// A keyword alone; `name` is its lower-case name, `token` the keyword.
    pub const fn pure_token(name: &'static CStr, token: &'static str) -> ArgDoc {
        ArgDoc::new(name, ArgKind::PureToken).token(token)
    }
    /// One of `choices`.
    pub const fn one_of(name: &'static CStr, choices: &'static [ArgDoc]) -> ArgDoc {
        ArgDoc {
            children: choices,
            ..ArgDoc::new(name, ArgKind::OneOf)
        }
    }

    /// `parts`, one after another.
    pub const fn block(name: &'static CStr, parts: &'static [ArgDoc]) -> ArgDoc {
        ArgDoc {
            children: parts,
            ..ArgDoc::new(name, ArgKind::Block)
        }
    }

    /// May be repeated.
    pub const fn multiple(self) -> ArgDoc {
        ArgDoc {
            multiple: true,
            ..self
        }
    }

    /// Preceded by the keyword `token`.
    pub const fn token(self, token: &'static str) -> ArgDoc {
        ArgDoc {
            token: Some(token),
            ..self
        }
    }
    pub const fn optional(self) -> ArgDoc {
        ArgDoc {
            optional: true,
            ..self
        }
    }
    pub const fn summary(self, summary: &'static CStr) -> ArgDoc {
        ArgDoc {
            summary: Some(summary),
            ..self
        }
    }
    pub const fn since(self, release: &'static CStr) -> ArgDoc {
        ArgDoc {
            since: Some(release),
            ..self
        }
    }

    /// How many words of the command line a required, single argument takes; a choice takes
    /// as many as each of its alternatives, if they agree.
    const fn words(&self) -> Option<i32> {
        match self.kind {
            ArgKind::OneOf => {
                let mut words = None;
                let mut i = 0;
                while i < self.children.len() {
                    match (words, self.children[i].words()) {
                        (None, count) if i == 0 => words = count,
                        (Some(a), Some(b)) if a == b => {}
                        _ => return None,
                    }
                    i += 1;
                }
                words
            }
            ArgKind::Block => {
                let mut words = 0;
                let mut i = 0;
                while i < self.children.len() {
                    let child = &self.children[i];
                    match child.words() {
                        Some(count) if !child.optional && !child.multiple => words += count,
                        _ => return None,
                    }
                    i += 1;
                }
                Some(words)
            }
            ArgKind::PureToken => Some(1),
            _ if self.token.is_some() => Some(2),
            _ => Some(1),
        }
    }
}
