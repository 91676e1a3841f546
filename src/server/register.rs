//! Load time: the checks Goblin makes before it registers anything, then the command table
//! (with its docs and ACL categories) and the `INFO goblin` section.

use std::ffi::{c_int, CStr, CString};
use std::ptr;
use std::sync::atomic::Ordering;

use redis_module::raw;

use super::api::{api, missing_required, optional_api};
use super::ctx::SERVES_PROBE;
use super::info::info_entry_point;
use super::probe::command_exists;
use super::Registration;
use crate::server::command::{ArgDoc, ArgKind, KeyAccess, Keys, Spec};

/// What `lib.rs` hands the server: the module's name, version and command table.
pub struct ModuleSpec {
    pub name: &'static CStr,
    pub version: c_int,
    pub commands: &'static [Registration],
    /// The core commands the module's writes replicate as: the load is refused if the server
    /// does not know one (renamed away), as those writes could not reach replicas or the AOF.
    pub replicates_as: &'static [&'static CStr],
    /// What the module does for clients that wait in the server.
    pub waiting: &'static dyn super::Waiting,
    /// `INFO goblin` fields read when asked.
    pub gauges: &'static [Gauge],
    /// The module arguments that take milliseconds, beyond the server's own (`allow-unload`,
    /// `no-stand-ins`).
    pub settings: &'static [Setting],
    /// Called once the load can no longer fail, with a context for its clock.
    pub loaded: fn(&super::Ctx),
    /// Called when this server, a replica, is promoted to primary.
    pub promoted: fn(&super::Ctx),
    /// Called when this server took over slots another node served (Valkey's atomic slot
    /// migration, imported and handed over).
    pub took_over: fn(&super::Ctx),
}

/// A module argument `name N`: milliseconds, at least `least` and below 2^40 in size, handed
/// to `apply` at load.
pub struct Setting {
    pub name: &'static str,
    pub least: i64,
    pub apply: fn(i64),
}

/// An `INFO goblin` field read when asked: its name after the `goblin_` prefix, and its reader.
pub type Gauge = (&'static str, fn() -> u64);

/// A load-time context: only for logging and registration.
pub struct LoadCtx {
    pub(super) ptr: *mut raw::RedisModuleCtx,
}

impl LoadCtx {
    pub fn log_warning(&self, message: &str) {
        super::log(self.ptr, c"warning", message);
    }

    pub fn log_notice(&self, message: &str) {
        super::log(self.ptr, c"notice", message);
    }
}

/// A zeroed C struct: the terminator of the server's key-spec and argument arrays.
fn zeroed<T>() -> T {
    // SAFETY: only used for plain C structs of pointers and integers, where all-zero is the
    // documented "end of array" value.
    unsafe { std::mem::zeroed() }
}

/// The key spec flags of `access`; also what a `PerCall` command answers for one call.
pub(super) fn key_flags(access: KeyAccess) -> u64 {
    use raw::{
        REDISMODULE_CMD_KEY_ACCESS as ACCESS, REDISMODULE_CMD_KEY_DELETE as DELETE,
        REDISMODULE_CMD_KEY_RM as RM, REDISMODULE_CMD_KEY_RO as RO, REDISMODULE_CMD_KEY_RW as RW,
        REDISMODULE_CMD_KEY_UPDATE as UPDATE, REDISMODULE_CMD_KEY_VARIABLE_FLAGS as VARIABLE,
    };
    u64::from(match access {
        KeyAccess::ReadUpdate => RW | ACCESS | UPDATE,
        KeyAccess::ReadDelete => RW | ACCESS | DELETE,
        KeyAccess::Read => RO | ACCESS,
        KeyAccess::Remove => RM | DELETE,
        KeyAccess::CompareDelete => RW | DELETE,
        KeyAccess::PerCall(_) => RW | DELETE | VARIABLE,
    })
}

fn arg_type(kind: ArgKind) -> raw::RedisModuleCommandArgType {
    match kind {
        ArgKind::Key => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
        ArgKind::String => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
        ArgKind::Integer => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
        ArgKind::Double => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_DOUBLE,
        ArgKind::UnixTime => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_UNIX_TIME,
        ArgKind::PureToken => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN,
        ArgKind::OneOf => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_ONEOF,
        ArgKind::Block => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_BLOCK,
    }
}

/// What the server's argument arrays point into, kept alive until it has copied them.
#[derive(Default)]
struct Arena {
    arrays: Vec<Vec<raw::RedisModuleCommandArg>>,
    tokens: Vec<CString>,
}

/// The server's argument array for `docs` (zero-terminated), with the arrays of their
/// children and the C text of their tokens kept alive in `arena`.
fn raw_args(docs: &[ArgDoc], arena: &mut Arena) -> *mut raw::RedisModuleCommandArg {
    let mut args: Vec<raw::RedisModuleCommandArg> = docs
        .iter()
        .map(|doc| {
            let mut arg: raw::RedisModuleCommandArg = zeroed();
            arg.name = doc.name.as_ptr();
            arg.type_ = arg_type(doc.kind);
            arg.key_spec_index = if doc.kind == ArgKind::Key { 0 } else { -1 };
            arg.token = match doc.token.map(CString::new) {
                Some(Ok(token)) => {
                    let text = token.as_ptr();
                    arena.tokens.push(token);
                    text
                }
                // A token holding a NUL is a bug in a Spec; its docs then show no token.
                Some(Err(_)) | None => ptr::null(),
            };
            arg.summary = doc.summary.map_or(ptr::null(), CStr::as_ptr);
            arg.since = doc.since.map_or(ptr::null(), CStr::as_ptr);
            let mut flags = 0;
            if doc.optional {
                flags |= raw::REDISMODULE_CMD_ARG_OPTIONAL;
            }
            if doc.multiple {
                flags |= raw::REDISMODULE_CMD_ARG_MULTIPLE;
            }
            arg.flags = flags as _;
            if doc.children.is_empty() {
                // As the server's own docs show it: every value names itself.
                arg.display_text = doc.name.as_ptr();
            } else {
                arg.subargs = raw_args(doc.children, arena);
            }
            arg
        })
        .collect();
    args.push(zeroed());
    let array = args.as_mut_ptr();
    arena.arrays.push(args);
    array
}

/// Sets summary, complexity, arity, key spec and argument specs, where the server has
/// `RedisModule_SetCommandInfo` (Redis 7.0 and later, Valkey). The server copies everything.
fn set_docs(context: &LoadCtx, command: *mut raw::RedisModuleCommand, spec: &Spec) -> bool {
    let Some(set_info) = optional_api!(RedisModule_SetCommandInfo) else {
        return true;
    };
    let version = raw::RedisModuleCommandInfoVersion {
        version: 1,
        sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
        sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
        sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
    };
    let mut key_spec: raw::RedisModuleCommandKeySpec = zeroed();
    key_spec.flags = key_flags(spec.keys.access());
    key_spec.begin_search_type = raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
    match spec.keys {
        Keys::One(_) => {
            key_spec.bs.index =
                raw::RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_1 { pos: 1 };
            key_spec.find_keys_type =
                raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
            key_spec.fk.range = raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_1 {
                lastkey: 0,
                keystep: 1,
                limit: 0,
            };
        }
        Keys::Counted { count_at, step, .. } => {
            // The count at `count_at`, the first key right after it, one every `step`. Redis
            // 7.0 and 8.2 read a count with a step wrongly (the last key at `first + count - 1`,
            // so GOBLIN.MGCRA's second policy's key would escape ACL key patterns): marked
            // incomplete, the spec is shown, and every server asks the command for its keys.
            key_spec.flags |= u64::from(raw::REDISMODULE_CMD_KEY_INCOMPLETE);
            key_spec.bs.index =
                raw::RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_1 { pos: count_at };
            key_spec.find_keys_type =
                raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_KEYNUM;
            key_spec.fk.keynum = raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_2 {
                keynumidx: 0,
                firstkey: 1,
                keystep: step,
            };
        }
    }
    let mut key_specs = vec![key_spec, zeroed()];
    let mut arena = Arena::default();
    let args = raw_args(spec.args, &mut arena);
    let info = raw::RedisModuleCommandInfo {
        version: &version,
        summary: spec.summary.as_ptr(),
        complexity: spec.complexity.as_ptr(),
        since: spec.since.as_ptr(),
        history: ptr::null_mut(),
        tips: ptr::null(),
        arity: spec.arity(),
        key_specs: key_specs.as_mut_ptr(),
        args,
    };
    // SAFETY: a command handle from GetCommand and an info struct whose arrays end in zeroed
    // entries; all of it outlives the call, and the server copies what it keeps.
    let ok = unsafe { set_info(command, &info) } == raw::REDISMODULE_OK as c_int;
    if !ok {
        context.log_warning(&format!(
            "goblin: the server refused the docs of {:?}",
            spec.name
        ));
    }
    ok
}

/// Whether the server has a command called `name`, or why the module cannot tell (then it
/// does not load: it will not guess). Load time only.
fn server_has(ctx: *mut raw::RedisModuleCtx, name: &CStr) -> Result<bool, String> {
    command_exists(ctx, name).ok_or_else(|| {
        format!(
            "it cannot tell whether this server has {:?}: calling it with no arguments was \
             refused for a reason other than an unknown command or the number of arguments",
            name
        )
    })
}

/// A native command whose contract is not the same on every server that has one, where the
/// stand-in is Goblin's own: what to ask the server's own, and what the log says when it lacks
/// what the stand-in offers (an application that used it on Goblin loses it there).
struct Contract {
    name: &'static CStr,
    /// The arguments after a key that the server's own refuses with `ERR syntax error` when it
    /// lacks one of them, and with another error when it has them all: never a write (`EX 0` is
    /// refused by every version, after the options are read).
    probe: [&'static CStr; 8],
    lacking: &'static str,
}

const CONTRACTS: &[Contract] = &[Contract {
    name: c"increx",
    // Redis's INCREX reads every option, then refuses LBOUND above UBOUND; Valkey's, as merged,
    // knows no LBOUND.
    probe: [
        c"LBOUND",
        c"1",
        c"UBOUND",
        c"0",
        c"SATURATE",
        c"ENX",
        c"EX",
        c"0",
    ],
    lacking: "goblin: this server's own INCREX lacks LBOUND, UBOUND, SATURATE or ENX, which \
              Goblin's stand-in takes on servers without INCREX; a call that uses them gets a \
              syntax error here (docs/commands/increx.md)",
}];

/// Where the server's own command (no stand-in registered) lacks what the stand-in offers, one
/// line in the log. Asked once, at load; a cluster node whose slots are not its own yet cannot
/// be asked, and says nothing.
fn check_contract(context: &LoadCtx, name: &CStr) {
    let Some(contract) = CONTRACTS.iter().find(|contract| contract.name == name) else {
        return;
    };
    if super::probe::syntax_error(context.ptr, name, c"goblin:probe", &contract.probe) == Some(true)
    {
        context.log_warning(contract.lacking);
    }
}

/// What the module arguments say about registering.
#[derive(Debug, Clone, Copy)]
pub(super) struct Choices {
    /// Register the stand-ins the server lacks (`no-stand-ins` says no).
    pub stand_ins: bool,
}

/// Registers the command table (its keys as each `Spec` says) and `INFO goblin`.
pub(super) fn register(
    context: &LoadCtx,
    module: &ModuleSpec,
    choices: Choices,
) -> Result<(), String> {
    let missing = missing_required();
    if !missing.is_empty() {
        return Err(format!(
            "this server lacks module APIs Goblin needs: {}",
            missing.join(", ")
        ));
    }
    let ctx = context.ptr;
    // Effects replicate by command name, looked up when they are replicated as the check
    // looks them up here; under `rename-command` an effect would be written locally and then
    // fail to propagate, so the module refuses to load instead. The server's command table
    // does not change after it starts (`rename-command` is read from the config file only),
    // so what is known here is known for every write.
    let mut renamed = Vec::new();
    for name in module.replicates_as {
        if !server_has(ctx, name)? {
            renamed.push(*name);
        }
    }
    if !renamed.is_empty() {
        return Err(format!(
            "its writes replicate as {renamed:?}, which this server does not know (rename-command?)"
        ));
    }
    // A cluster node asks the server whether it still serves a waiter's key before a grant
    // made on a timer or after another client's write (`Ctx::serves`).
    // SAFETY: a load-time context.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx) } as u32;
    if flags & raw::REDISMODULE_CTX_FLAGS_CLUSTER != 0 && !server_has(ctx, SERVES_PROBE)? {
        return Err(format!(
            "in a cluster it asks {SERVES_PROBE:?} whether a key is still served here, which \
             this server does not know (rename-command?)"
        ));
    }
    // After the check above, which `SKIP_COMMAND_VALIDATION` rests on.
    super::options::declare_at_registration(ctx);
    // SAFETY: load-time calls on the context the server handed to OnLoad.
    unsafe {
        for command in module.commands {
            let spec = command.spec;
            if spec.stand_in {
                if !choices.stand_ins {
                    continue;
                }
                if server_has(ctx, spec.name)? {
                    context.log_notice(&format!(
                        "goblin: {} is the server's own here; no stand-in",
                        spec.name.to_string_lossy()
                    ));
                    check_contract(context, spec.name);
                    continue;
                }
            }
            // A command whose keys or key flags depend on the call answers the server's
            // key-position requests itself.
            let flags = if spec.keys.asked_per_call() {
                CString::new(format!("{} getkeys-api", spec.flags.to_string_lossy()))
                    .map_err(|_| format!("bad flags for {:?}", spec.name))?
            } else {
                CString::from(spec.flags)
            };
            // Keys found per call have no fixed range: the key spec alone says where they are.
            let (first, last, step) = match spec.keys {
                Keys::One(_) => (1, 1, 1),
                Keys::Counted { .. } => (0, 0, 0),
            };
            let created = api!(RedisModule_CreateCommand)(
                ctx,
                spec.name.as_ptr(),
                Some(command.callback),
                flags.as_ptr(),
                first,
                last,
                step,
            );
            if created != raw::REDISMODULE_OK as c_int {
                return Err(format!("could not create {:?}", spec.name));
            }
            let Some(get_command) = optional_api!(RedisModule_GetCommand) else {
                spec.stats.registered.store(true, Ordering::Relaxed);
                continue;
            };
            let handle = get_command(ctx, spec.name.as_ptr());
            if handle.is_null() {
                return Err(format!("no handle for {:?}", spec.name));
            }
            if let Some(set_categories) = optional_api!(RedisModule_SetCommandACLCategories) {
                if set_categories(handle, spec.acl_categories.as_ptr())
                    != raw::REDISMODULE_OK as c_int
                {
                    return Err(format!(
                        "could not set ACL categories {:?} on {:?}",
                        spec.acl_categories, spec.name
                    ));
                }
            }
            // Documentation is for people: a server that refuses it still gets the commands.
            set_docs(context, handle, spec);
            spec.stats.registered.store(true, Ordering::Relaxed);
        }
        if api!(RedisModule_RegisterInfoFunc)(ctx, Some(info_entry_point))
            != raw::REDISMODULE_OK as c_int
        {
            context.log_warning("goblin: could not register the INFO section");
        }
    }
    Ok(())
}
