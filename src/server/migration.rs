//! Valkey's atomic slot migration (`CLUSTER MIGRATESLOTS`, Valkey 9.0): followed through its
//! server event, and declared (`VALKEYMODULE_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION`) only where
//! the event is followed, since one part of Goblin depends on it. What the migration means for
//! every part of Goblin is docs/operations.md's "Atomic slot migration"; in short:
//!
//! - the source keeps serving the slots while their keys and every write after them stream to
//!   the target (Goblin's writes are core commands with absolute expiries, which the stream
//!   carries as it carries any); the target applies them before it owns the slots, and no Goblin
//!   command, waiter or timer acts on a key a node does not serve (`Ctx::serves`);
//! - when the target takes the slots over, the source's blocked clients on them are answered
//!   `-MOVED` by the server, Goblin's waiters as BLPOP's (they block on a name in their key's
//!   slot), and its lines there have nothing left to do (`Waiting::slots_moved`);
//! - the target's fencing tokens start a margin ahead of its clock (`ModuleSpec::took_over`): the
//!   tokens of the keys it took over were minted on the source's clock, up to the source's margin
//!   ahead of it, exactly as a promoted replica's predecessor's were.

use std::ffi::c_void;
use std::ptr::NonNull;

use redis_module::raw;

use super::options::{self, VALKEY_HANDLE_ATOMIC_SLOT_MIGRATION};
use super::Ctx;

/// `VALKEYMODULE_EVENT_ATOMIC_SLOT_MIGRATION` (Valkey 9.0). On Redis, event 19 is another one
/// (its slot migration's trim): only ever subscribed on Valkey.
const VALKEY_EVENT_ATOMIC_SLOT_MIGRATION: u64 = 19;
/// Its subevents that Goblin acts on (`VALKEYMODULE_SUBEVENT_ATOMIC_SLOT_MIGRATION_*`): the
/// target took the slots over, the source handed them over. The others (an import or an export
/// started or aborted) change nothing for Goblin: until the handover the source serves the slots
/// and the target does not.
const IMPORT_COMPLETED: u64 = 4;
const EXPORT_COMPLETED: u64 = 5;

unsafe extern "C" fn on_migration(
    ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut c_void,
) {
    let Some(ctx) = NonNull::new(ctx).map(Ctx::new) else {
        return;
    };
    match subevent {
        IMPORT_COMPLETED => {
            if let Some(module) = super::info::loaded() {
                (module.took_over)(&ctx);
            }
        }
        EXPORT_COMPLETED => {
            if let Some(waiting) = super::blocking::waiting() {
                waiting.slots_moved(&ctx);
            }
        }
        _ => {}
    }
}

/// Follows atomic slot migrations and declares that Goblin handles them, where the server is
/// Valkey and offers the option. Load time, among the last steps (a subscription cannot be
/// taken back): a server that offers the option and refuses the event keeps its refusal of
/// `CLUSTER MIGRATESLOTS`, and the log says why.
pub(super) fn follow(ctx: *mut raw::RedisModuleCtx) {
    if !options::valkey_offers(VALKEY_HANDLE_ATOMIC_SLOT_MIGRATION) {
        return;
    }
    if !super::subscribe(ctx, VALKEY_EVENT_ATOMIC_SLOT_MIGRATION, on_migration) {
        super::log(
            ctx,
            c"warning",
            "goblin: could not follow atomic slot migrations; CLUSTER MIGRATESLOTS stays \
             refused while Goblin is loaded (CLUSTER SETSLOT and MIGRATE still move slots)",
        );
        return;
    }
    options::declare(ctx, VALKEY_HANDLE_ATOMIC_SLOT_MIGRATION);
}
