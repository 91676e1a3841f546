//! Load time: the checks Goblin makes before it registers anything, then the command table
//! (with its docs and ACL categories) and the `INFO goblin` section.

use std::ffi::{c_int, CStr};
use std::ptr;

use redis_module::raw;

use super::api::{api, missing_required, optional_api};
use super::info::info_entry_point;
use super::module::LoadCtx;
use super::Registration;
use crate::command::{ArgKind, KeyAccess, Spec};
use crate::effects::CoreCommand;

/// A zeroed C struct: the terminator of the server's key-spec and argument arrays.
fn zeroed<T>() -> T {
    // SAFETY: only used for plain C structs of pointers and integers, where all-zero is the
    // documented "end of array" value.
    unsafe { std::mem::zeroed() }
}

fn key_flags(access: KeyAccess) -> u64 {
    let base = raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_ACCESS;
    u64::from(match access {
        KeyAccess::ReadUpdate => base | raw::REDISMODULE_CMD_KEY_UPDATE,
        KeyAccess::ReadDelete => base | raw::REDISMODULE_CMD_KEY_DELETE,
    })
}

fn arg_type(kind: ArgKind) -> raw::RedisModuleCommandArgType {
    match kind {
        ArgKind::Key => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
        ArgKind::String => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
        ArgKind::Integer => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
        ArgKind::Double => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_DOUBLE,
    }
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
    key_spec.flags = key_flags(spec.key);
    key_spec.begin_search_type = raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
    key_spec.bs.index = raw::RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_1 { pos: 1 };
    key_spec.find_keys_type = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
    key_spec.fk.range = raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_1 {
        lastkey: 0,
        keystep: 1,
        limit: 0,
    };
    let mut key_specs = vec![key_spec, zeroed()];
    let mut args: Vec<raw::RedisModuleCommandArg> = spec
        .args
        .iter()
        .map(|arg| {
            let mut raw_arg: raw::RedisModuleCommandArg = zeroed();
            raw_arg.name = arg.name.as_ptr();
            raw_arg.type_ = arg_type(arg.kind);
            raw_arg.key_spec_index = if arg.kind == ArgKind::Key { 0 } else { -1 };
            raw_arg
        })
        .collect();
    args.push(zeroed());
    let info = raw::RedisModuleCommandInfo {
        version: &version,
        summary: spec.summary.as_ptr(),
        complexity: spec.complexity.as_ptr(),
        since: spec.since.as_ptr(),
        history: ptr::null_mut(),
        tips: ptr::null(),
        arity: spec.arity(),
        key_specs: key_specs.as_mut_ptr(),
        args: args.as_mut_ptr(),
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

/// The core commands among `commands` that the server does not know. Effects replicate by
/// command name; under `rename-command` an effect would be written locally and then fail to
/// propagate, so the module refuses to load instead. Load time only: `COMMAND INFO` through
/// `RedisModule_Call` never runs in a command path.
fn unknown_commands(ctx: *mut raw::RedisModuleCtx, commands: &[CoreCommand]) -> Vec<&'static CStr> {
    let (Some(call), Some(reply_type), Some(element), Some(free)) = (
        optional_api!(RedisModule_Call),
        optional_api!(RedisModule_CallReplyType),
        optional_api!(RedisModule_CallReplyArrayElement),
        optional_api!(RedisModule_FreeCallReply),
    ) else {
        return Vec::new();
    };
    commands
        .iter()
        .map(|command| command.name())
        .filter(|name| {
            // SAFETY: a load-time context; the reply is freed once, its element not separately
            // (elements belong to the reply).
            unsafe {
                let reply = call(
                    ctx,
                    c"COMMAND".as_ptr(),
                    c"cc".as_ptr(),
                    c"INFO".as_ptr(),
                    name.as_ptr(),
                );
                if reply.is_null() {
                    return false; // COMMAND itself unavailable: cannot tell, do not refuse
                }
                let first = element(reply, 0);
                let missing =
                    first.is_null() || reply_type(first) == raw::REDISMODULE_REPLY_NULL as c_int;
                free(reply);
                missing
            }
        })
        .collect()
}

/// Registers the command table (one key at position 1 for every command) and `INFO goblin`.
pub(super) fn register(context: &LoadCtx, commands: &[Registration]) -> Result<(), String> {
    let missing = missing_required();
    if !missing.is_empty() {
        return Err(format!(
            "this server lacks module APIs Goblin needs: {}",
            missing.join(", ")
        ));
    }
    let ctx = context.ptr;
    let renamed = unknown_commands(ctx, CoreCommand::ALL);
    if !renamed.is_empty() {
        return Err(format!(
            "its writes replicate as {renamed:?}, which this server does not know (rename-command?)"
        ));
    }
    // SAFETY: load-time calls on the context the server handed to OnLoad.
    unsafe {
        // WATCH and client-side caching must see a write only when a command really writes,
        // not whenever it opens a key for writing (an error reply must leave no trace).
        api!(RedisModule_SetModuleOptions)(
            ctx,
            raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as c_int,
        );
        for command in commands {
            let spec = command.spec;
            let created = api!(RedisModule_CreateCommand)(
                ctx,
                spec.name.as_ptr(),
                Some(command.callback),
                spec.flags.as_ptr(),
                1,
                1,
                1,
            );
            if created != raw::REDISMODULE_OK as c_int {
                return Err(format!("could not create {:?}", spec.name));
            }
            let Some(get_command) = optional_api!(RedisModule_GetCommand) else {
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
        }
        if api!(RedisModule_RegisterInfoFunc)(ctx, Some(info_entry_point))
            != raw::REDISMODULE_OK as c_int
        {
            context.log_warning("goblin: could not register the INFO section");
        }
    }
    Ok(())
}
