//! The history: every call the campaign made, as it was invoked and as it ended (answered, or
//! unknown: the connection went before the reply), with the server's clock around it, and
//! every fault the nemesis struck, with its start and end. All servers run on this machine, so
//! their `TIME` is one clock, which the campaign's own `SystemTime` also reads: times of
//! different servers compare directly.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::wire::{Command, Reply};

pub type NodeId = usize;

/// Now, in Unix microseconds, on the clock the servers read.
pub fn wall_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// Who made a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actor {
    Worker(usize),
    Nemesis,
    Observer,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Its reply.
    Answered(Reply),
    /// The connection went before the reply: it may or may not have run.
    Unknown(String),
    /// Never sent: it did not run.
    NotSent(String),
}

impl Outcome {
    pub fn reply(&self) -> Option<&Reply> {
        match self {
            Outcome::Answered(reply) => Some(reply),
            _ => None,
        }
    }
}

/// What kind of hold a lock key gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A token lock (GOBLIN.LOCK's string), or a readers-writer lock's writer.
    Lock,
    Write,
    Read,
    /// A member of a GOBLIN.ZWINDOW window.
    Lease,
}

impl Mode {
    /// Whether two holds of these modes may not run at once (a lease's limit aside).
    pub fn excludes(self, other: Mode) -> bool {
        !(self == Mode::Read && other == Mode::Read)
    }
}

/// A lock key's request, as the checkers read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Acquire {
    pub key: Vec<u8>,
    pub token: Vec<u8>,
    pub mode: Mode,
    /// The lease in milliseconds (a lease's window, for `Mode::Lease`).
    pub ms: i64,
    pub fence: bool,
    /// A blocking acquire's timeout in milliseconds (0: for ever).
    pub timeout_ms: Option<i64>,
    /// The caller held the key in this mode already (a renewal: it waits for nobody).
    pub renewal: bool,
    /// A reader asking to write, or the writer asking to read: it waits for nobody in line.
    pub switch: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Extend {
    pub key: Vec<u8>,
    pub token: Vec<u8>,
    pub mode: Mode,
    pub ms: i64,
    pub replace: bool,
    pub fence: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    pub key: Vec<u8>,
    pub token: Vec<u8>,
    pub mode: Mode,
}

/// A limit's call: which family, and enough of its arguments for the model and the quota.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    pub family: crate::limits::Family,
    pub keys: Vec<Vec<u8>>,
}

/// What a call was, for the checkers.
#[derive(Debug, Clone, PartialEq)]
pub enum What {
    Acquire(Acquire),
    Extend(Extend),
    Release(Release),
    /// A read of who holds a lock key (GOBLIN.RWHELD, or an observer's probe).
    Probe {
        key: Vec<u8>,
    },
    Limit(Limit),
    /// A fenced write to the resource (not a server call).
    Write {
        key: Vec<u8>,
        token: i64,
        accepted: bool,
    },
    /// Anything else (the nemesis's own calls).
    Other,
}

/// How the nemesis made a waiter leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// Its connection closed from the client's side.
    Closed,
    /// CLIENT KILL.
    Killed,
    /// CLIENT KILL in the very transaction that released the lock it waited for.
    KilledAsGranted,
    /// CLIENT UNBLOCK.
    Unblocked,
}

#[derive(Debug, Clone)]
pub struct Op {
    pub id: u64,
    pub actor: Actor,
    pub node: Option<NodeId>,
    /// The node's process incarnation when the call was made.
    pub incarnation: u32,
    pub what: What,
    pub command: Command,
    /// The server's clock right before and right after the call, in microseconds (`TIME` in
    /// the same pipeline: nothing of another client runs in between).
    pub lo: Option<i64>,
    pub hi: Option<i64>,
    /// The campaign's elapsed milliseconds when the call was made and when it ended.
    pub at_ms: u64,
    pub done_ms: u64,
    pub outcome: Outcome,
    /// Reads of the keys in the same step, before and after the call.
    pub pre: Vec<Reply>,
    pub post: Vec<Reply>,
    pub client: Option<i64>,
    /// The nemesis made this waiter leave.
    pub left: Option<Left>,
    /// The call ran inside a MULTI that was never executed (the connection closed first).
    pub discarded: bool,
}

impl Op {
    pub fn new(actor: Actor, what: What, command: Command) -> Op {
        Op {
            id: 0,
            actor,
            node: None,
            incarnation: 0,
            what,
            command,
            lo: None,
            hi: None,
            at_ms: 0,
            done_ms: 0,
            outcome: Outcome::NotSent(String::new()),
            pre: Vec::new(),
            post: Vec::new(),
            client: None,
            left: None,
            discarded: false,
        }
    }

    pub fn reply(&self) -> Option<&Reply> {
        self.outcome.reply()
    }

    pub fn key(&self) -> Option<&[u8]> {
        match &self.what {
            What::Acquire(a) => Some(&a.key),
            What::Extend(e) => Some(&e.key),
            What::Release(r) => Some(&r.key),
            What::Probe { key } | What::Write { key, .. } => Some(key),
            What::Limit(limit) => limit.keys.first().map(Vec::as_slice),
            What::Other => None,
        }
    }
}

/// The kinds of fault the nemesis strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    KillAsGranted,
    CloseWaiter,
    CloseMidCall,
    CloseInMulti,
    ClientKill,
    ClientUnblock,
    ClientPause,
    SleepRelease,
    Freeze,
    KillRestartAof,
    KillRestartRdb,
    DebugSleep,
    ModuleUnload,
    OutOfMemory,
    SentinelFailover,
    ClusterFailover,
    SlotMigration,
    AtomicSlotMigration,
    Partition,
    Delay,
    ForeignType,
    Delete,
    Expire,
    Rename,
    // The last: NAMED counts the kinds by it.
    Flush,
}

/// Every kind in the enum's order, with its printed name (`--faults` takes these names).
const NAMED: [(FaultKind, &str); 25] = [
    (FaultKind::KillAsGranted, "kill-as-granted"),
    (FaultKind::CloseWaiter, "close-waiter"),
    (FaultKind::CloseMidCall, "close-mid-call"),
    (FaultKind::CloseInMulti, "close-in-multi"),
    (FaultKind::ClientKill, "client-kill"),
    (FaultKind::ClientUnblock, "client-unblock"),
    (FaultKind::ClientPause, "client-pause"),
    (FaultKind::SleepRelease, "sleep-release-close"),
    (FaultKind::Freeze, "sigstop"),
    (FaultKind::KillRestartAof, "kill9-aof"),
    (FaultKind::KillRestartRdb, "kill9-rdb"),
    (FaultKind::DebugSleep, "debug-sleep"),
    (FaultKind::ModuleUnload, "module-unload"),
    (FaultKind::OutOfMemory, "oom"),
    (FaultKind::SentinelFailover, "sentinel-failover"),
    (FaultKind::ClusterFailover, "cluster-failover"),
    (FaultKind::SlotMigration, "slot-migration"),
    (FaultKind::AtomicSlotMigration, "atomic-slot-migration"),
    (FaultKind::Partition, "partition"),
    (FaultKind::Delay, "delay"),
    (FaultKind::ForeignType, "foreign-type"),
    (FaultKind::Delete, "del"),
    (FaultKind::Expire, "pexpire"),
    (FaultKind::Rename, "rename"),
    (FaultKind::Flush, "flushall"),
];

impl FaultKind {
    pub fn name(self) -> &'static str {
        // NAMED is in the enum's order (the test below proves it).
        NAMED[self as usize].1
    }

    /// A kind by its printed name.
    pub fn named(name: &str) -> Option<FaultKind> {
        NAMED
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(kind, _)| *kind)
    }

    /// Whether it may lose or rewrite what the servers hold (a failover, a restart, a
    /// partition, a write by hand): a hold or a window it touches is not checked across it.
    pub fn loses_state(self) -> bool {
        matches!(
            self,
            FaultKind::KillRestartAof
                | FaultKind::KillRestartRdb
                | FaultKind::SentinelFailover
                | FaultKind::ClusterFailover
                | FaultKind::SlotMigration
                | FaultKind::AtomicSlotMigration
                | FaultKind::Partition
                | FaultKind::Freeze
                | FaultKind::ForeignType
                | FaultKind::Delete
                | FaultKind::Expire
                | FaultKind::Rename
                | FaultKind::Flush
        )
    }

    /// Whether it writes keys by hand (a limit's window it touches is the hand's, not the
    /// module's).
    pub fn by_hand(self) -> bool {
        matches!(
            self,
            FaultKind::ForeignType
                | FaultKind::Delete
                | FaultKind::Expire
                | FaultKind::Rename
                | FaultKind::Flush
        )
    }
}

#[derive(Debug, Clone)]
pub struct Fault {
    pub kind: FaultKind,
    /// When it struck (elapsed milliseconds; its moment in the plan, or later if the fault
    /// before it ran long).
    pub at_ms: u64,
    /// When it began and ended, in Unix microseconds (the end: healed, restarted, failed over).
    pub start_us: i64,
    pub end_us: i64,
    pub node: Option<NodeId>,
    /// The keys it wrote by hand (all of them: `None`).
    pub keys: Option<Vec<Vec<u8>>>,
    pub detail: String,
}

/// A finding.
#[derive(Debug, Clone)]
pub struct Violation {
    pub checker: &'static str,
    pub message: String,
    /// The calls that show it.
    pub ops: Vec<u64>,
    /// The elapsed millisecond by which it showed (the history's prefix that holds it).
    pub at_ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_named_once_in_the_enums_order() {
        assert_eq!(
            NAMED.len(),
            FaultKind::Flush as usize + 1,
            "Flush is the last kind"
        );
        for (at, (kind, name)) in NAMED.iter().enumerate() {
            assert_eq!(*kind as usize, at, "{name} out of order");
            assert_eq!(FaultKind::named(name), Some(*kind));
        }
    }
}
