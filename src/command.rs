//! The one shape of every command: a `Spec` that describes it once (name, flags, ACL
//! categories, how it uses its key, its arguments, from which the arity follows, and where its
//! calls are counted), a parser from the arguments to a typed struct, and `run`.

use std::ffi::CStr;

use crate::error::CommandError;
use crate::server::{Args, Ctx, Reply};
use crate::stats::{CommandStats, Counter};

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
    /// How the one key, the first argument, is used.
    pub key: KeyAccess,
    /// Every argument after the name, the key first.
    pub args: &'static [ArgDoc],
    /// Its calls and errors, for `INFO goblin`.
    pub stats: &'static CommandStats,
    /// The prefix of its `INFO goblin` fields (`<prefix>_calls`, `<prefix>_errors`, ...).
    pub info_name: &'static str,
    /// Its own `INFO goblin` fields after calls and errors: (name after the prefix, counter).
    pub outcomes: &'static [(&'static str, &'static Counter)],
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
            if arg.optional || arg.multiple {
                fixed = false;
            } else {
                words += arg.words();
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

/// How a command uses its key: the key spec's flags, and whether it is opened for writing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum KeyAccess {
    /// Reads the value and updates it (INCR's and ZADD's access). The server allows one of
    /// update, insert and delete per key spec, so ZWINDOW, which can also empty its set by
    /// eviction, declares its main access.
    ReadUpdate,
    /// Reads, and may delete (a release).
    ReadDelete,
}

impl KeyAccess {
    pub fn writes(self) -> bool {
        match self {
            KeyAccess::ReadUpdate | KeyAccess::ReadDelete => true,
        }
    }
}

/// One argument in `COMMAND DOCS`.
pub struct ArgDoc {
    pub name: &'static CStr,
    pub kind: ArgKind,
    pub optional: bool,
    pub multiple: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ArgKind {
    Key,
    String,
    Integer,
    Double,
}

impl ArgDoc {
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

    const fn new(name: &'static CStr, kind: ArgKind) -> ArgDoc {
        ArgDoc {
            name,
            kind,
            optional: false,
            multiple: false,
        }
    }

    /// How many words of the command line the argument takes.
    const fn words(&self) -> i32 {
        1
    }
}
