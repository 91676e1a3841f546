//! What a command answers, and how it goes on the wire: each variant is written with the
//! server's own reply function, which picks the RESP2 or RESP3 form the client speaks (a null
//! is `$-1` or `_`, a double a bulk string or `,`), exactly as the server's commands do.
//! Goblin's only doubles are INCREX BYFLOAT's, the server's long double.

use std::borrow::Cow;
use std::ffi::{c_char, c_long};

use redis_module::raw;

use super::api::api;
use super::{Ctx, LongDouble};

/// A command's reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply<'call> {
    Int(i64),
    /// A status reply (`+OK`).
    Status(&'static std::ffi::CStr),
    /// A bulk string.
    Bulk(Cow<'call, [u8]>),
    /// The null reply.
    Null,
    /// The server's long double, in INCRBYFLOAT's human form: a bulk string in RESP2, a
    /// double in RESP3.
    LongDouble(LongDouble),
    Array(Vec<Reply<'call>>),
    /// An array of integers, on the stack for the few that a throttle replies (GOBLIN.GCRA's
    /// five fields): no allocation on the hottest path.
    Ints(smallvec::SmallVec<[i64; 8]>),
    /// An array: `head`'s two integers, then an array of five integers per row (GOBLIN.MGCRA's
    /// two leading fields, then each policy's five), on the stack for one row; more take one
    /// allocation (every reply is moved about by value, so it stays as small as `Ints`).
    Rows {
        head: [i64; 2],
        rows: smallvec::SmallVec<[[i64; 5]; 1]>,
    },
    /// Nothing now: the client is blocked, and the server replies when it is woken.
    Blocked,
    /// An error reply, for a waiter's reply (a command's own errors are its `Err`): spelled as
    /// `command` (its name, lower case) replies it.
    Error(super::error::CommandError, &'static std::ffi::CStr),
}

impl Reply<'_> {
    /// An array of integers, copied onto the stack (up to eight).
    pub fn ints(items: &[i64]) -> Self {
        Reply::Ints(smallvec::SmallVec::from_slice(items))
    }

    /// Writes the reply on the call's context, and is gone.
    pub(super) fn send(self, ctx: &Ctx) {
        self.write(ctx.raw());
    }

    /// Taken by value: each arm drops what its variant owns, where a reply borrowed and then
    /// dropped goes through the drop of every variant (about 25 instructions a call).
    fn write(self, ctx: *mut raw::RedisModuleCtx) {
        // SAFETY: a live context; each call writes one reply element, arrays their length
        // first and then exactly that many elements; buffers live across their call.
        unsafe {
            match self {
                Reply::Int(value) => {
                    api!(RedisModule_ReplyWithLongLong)(ctx, value);
                }
                Reply::Status(text) => {
                    api!(RedisModule_ReplyWithSimpleString)(ctx, text.as_ptr());
                }
                Reply::Bulk(bytes) => {
                    let text = if bytes.is_empty() {
                        c"".as_ptr()
                    } else {
                        bytes.as_ptr().cast::<c_char>()
                    };
                    api!(RedisModule_ReplyWithStringBuffer)(ctx, text, bytes.len());
                }
                Reply::Null => {
                    api!(RedisModule_ReplyWithNull)(ctx);
                }
                Reply::LongDouble(value) => value.reply(ctx),
                Reply::Blocked => {}
                Reply::Error(error, command) => {
                    let text = error.reply_text(&command.to_string_lossy());
                    let text = std::ffi::CString::new(text.into_owned()).unwrap_or_default();
                    api!(RedisModule_ReplyWithError)(ctx, text.as_ptr());
                }
                Reply::Ints(items) => {
                    let int = api!(RedisModule_ReplyWithLongLong);
                    api!(RedisModule_ReplyWithArray)(ctx, items.len() as c_long);
                    for item in &items {
                        int(ctx, *item);
                    }
                }
                Reply::Rows { head, rows } => {
                    let (array, int) = (
                        api!(RedisModule_ReplyWithArray),
                        api!(RedisModule_ReplyWithLongLong),
                    );
                    array(ctx, (head.len() + rows.len()) as c_long);
                    for item in head {
                        int(ctx, item);
                    }
                    for row in &rows {
                        array(ctx, row.len() as c_long);
                        for item in row {
                            int(ctx, *item);
                        }
                    }
                }
                Reply::Array(items) => {
                    api!(RedisModule_ReplyWithArray)(ctx, items.len() as c_long);
                    for item in items {
                        item.write(ctx);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reply is moved about by value (returned through `Result`, `catch_unwind` and the
    /// entry point): past the size `Ints` gives it, each move became a call to `memcpy`, on
    /// every call of every command (about 60 instructions a call, measured).
    #[test]
    fn a_reply_is_no_larger_than_an_array_of_integers() {
        assert!(std::mem::size_of::<Reply<'_>>() <= 88);
    }
}
