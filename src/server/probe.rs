//! Questions Goblin asks the server outside any command: at load, and when a setting changes.
//! Never in a command path.

use std::ffi::{c_int, CStr};

use redis_module::raw;

use super::api::{api, optional_api};
use super::error::CommandError;

extern "C" {
    /// The calling thread's `errno` (glibc and musl): how `RedisModule_Call` says why it
    /// refused a call.
    fn __errno_location() -> *mut c_int;
}

/// `ENOENT`: `RedisModule_Call` found no command of that name.
const ENOENT: c_int = 2;
/// `EINVAL`: it found the command, and refused the call for its number of arguments.
const EINVAL: c_int = 22;
/// `EPERM`: in a cluster, it refused a call on a key this node does not serve (where a client
/// would get `-MOVED` or `-ASK`); a cluster that is down is `ENETDOWN` or `EROFS` instead.
pub(super) const EPERM: c_int = 1;

/// Runs `call` with the thread's `errno` cleared first; its result, and `errno` after it: how
/// `RedisModule_Call` says why it refused a call.
pub(super) fn with_errno<T>(call: impl FnOnce() -> T) -> (T, c_int) {
    // SAFETY: errno is the calling thread's own.
    unsafe { *__errno_location() = 0 };
    let result = call();
    // SAFETY: as above.
    (result, unsafe { *__errno_location() })
}

/// Whether the server has a command called `name`, asked without `COMMAND` (which hardening
/// guides rename away): the name is called with no arguments at all. The server looks it up
/// as it looks up a client's command, so a renamed command is known only by its new name, and
/// refuses the call for its arity before running anything: `ENOENT` for a name it does not
/// know, `EINVAL` for one it knows. `None` when the answer is neither: the caller cannot tell,
/// and must not guess.
///
/// Only for commands that take at least one argument (each checked here takes a key): one
/// that takes none would run.
pub(super) fn command_exists(ctx: *mut raw::RedisModuleCtx, name: &CStr) -> Option<bool> {
    let call = api!(RedisModule_Call);
    // SAFETY: a context outside any command, an empty format (no arguments).
    let (reply, errno) = with_errno(|| unsafe { call(ctx, name.as_ptr(), c"".as_ptr()) });
    if !reply.is_null() {
        // SAFETY: a reply that came back, freed once.
        unsafe { api!(RedisModule_FreeCallReply)(reply) };
        return Some(true);
    }
    match errno {
        ENOENT => Some(false),
        EINVAL => Some(true),
        _ => None,
    }
}

/// Whether the server's `command key args...` is refused with `ERR syntax error`, the reply of
/// a command that does not know one of the arguments: `Some(true)` if so, `Some(false)` for any
/// other reply, `None` if the server would not take the call (in a cluster, a key this node does
/// not serve). For questions about a command's contract, with arguments chosen so that every
/// version of the command refuses them before it touches the key: the call never writes.
pub(super) fn syntax_error(
    ctx: *mut raw::RedisModuleCtx,
    command: &CStr,
    key: &CStr,
    args: &[&CStr; 8],
) -> Option<bool> {
    let (call, free) = (api!(RedisModule_Call), api!(RedisModule_FreeCallReply));
    let (Some(reply_type), Some(string)) = (
        optional_api!(RedisModule_CallReplyType),
        optional_api!(RedisModule_CallReplyStringPtr),
    ) else {
        return None;
    };
    let [a, b, c, d, e, f, g, h] = args.map(CStr::as_ptr);
    // SAFETY: a context outside any command; the format names the nine C strings passed after
    // it; the reply is read while alive and freed once.
    unsafe {
        let reply = call(
            ctx,
            command.as_ptr(),
            c"ccccccccc".as_ptr(),
            key.as_ptr(),
            a,
            b,
            c,
            d,
            e,
            f,
            g,
            h,
        );
        if reply.is_null() {
            return None;
        }
        let refused = reply_type(reply) == raw::REDISMODULE_REPLY_ERROR as c_int && {
            let mut len = 0usize;
            let text = string(reply, &mut len);
            !text.is_null()
                && std::slice::from_raw_parts(text.cast::<u8>(), len)
                    == CommandError::Syntax.reply_text("").as_bytes()
        };
        free(reply);
        Some(refused)
    }
}

/// One element of a reply.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Element {
    Null,
    Text(Vec<u8>),
    Other,
}

/// Element `index` of the reply to `command a b` (through `RedisModule_Call`); `None` if the
/// server cannot be asked or does not answer.
pub(super) fn call_element(
    ctx: *mut raw::RedisModuleCtx,
    command: &CStr,
    a: &CStr,
    b: &CStr,
    index: usize,
) -> Option<Element> {
    let (call, free) = (api!(RedisModule_Call), api!(RedisModule_FreeCallReply));
    let (Some(reply_type), Some(element), Some(string)) = (
        optional_api!(RedisModule_CallReplyType),
        optional_api!(RedisModule_CallReplyArrayElement),
        optional_api!(RedisModule_CallReplyStringPtr),
    ) else {
        return None;
    };
    // SAFETY: a context outside any command; the reply is read while alive and freed once,
    // its elements not separately (they belong to it).
    unsafe {
        let reply = call(
            ctx,
            command.as_ptr(),
            c"cc".as_ptr(),
            a.as_ptr(),
            b.as_ptr(),
        );
        if reply.is_null() {
            return None;
        }
        let item = element(reply, index);
        let found = if item.is_null() || reply_type(item) == raw::REDISMODULE_REPLY_NULL as c_int {
            Element::Null
        } else if reply_type(item) == raw::REDISMODULE_REPLY_STRING as c_int {
            let mut len = 0usize;
            let text = string(item, &mut len);
            if text.is_null() {
                Element::Other
            } else {
                Element::Text(std::slice::from_raw_parts(text.cast::<u8>(), len).to_vec())
            }
        } else {
            Element::Other
        };
        free(reply);
        Some(found)
    }
}

/// The fields `names` of `INFO section`, as text; `None` if the server cannot be asked.
pub(super) fn info_fields(
    ctx: *mut raw::RedisModuleCtx,
    section: &CStr,
    names: &[&CStr],
) -> Option<Vec<Option<String>>> {
    let (Some(get_info), Some(field), Some(free)) = (
        optional_api!(RedisModule_GetServerInfo),
        optional_api!(RedisModule_ServerInfoGetFieldC),
        optional_api!(RedisModule_FreeServerInfo),
    ) else {
        return None;
    };
    // SAFETY: a live context; the fields are copied while the info data is alive, and the data
    // is freed once.
    unsafe {
        let info = get_info(ctx, section.as_ptr());
        if info.is_null() {
            return None;
        }
        let values = names
            .iter()
            .map(|name| {
                let value = field(info, name.as_ptr());
                (!value.is_null()).then(|| CStr::from_ptr(value).to_string_lossy().into_owned())
            })
            .collect();
        free(ctx, info);
        Some(values)
    }
}
