//! The server's `long double` (80-bit on x86-64), for INCREX BYFLOAT: an opaque 16-byte slot
//! that only the C shim (`numbers.c`) reads and writes. Parsing, formatting and replies go
//! through the server's own functions, so every digit is the server's.

use std::cmp::Ordering;
use std::ffi::c_int;

use goblin_core::native::increx::Amount;
use redis_module::raw;

use super::api::api;
use super::{Arg, Ctx};

/// A `long double`, as C lays it out: 16 bytes, 16-aligned, some of them padding. Compared
/// and combined only through the shim, never byte by byte.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct LongDouble([u8; 16]);

extern "C" {
    fn goblin_ld_init(
        get_api: unsafe extern "C" fn(*const std::ffi::c_char, *mut std::ffi::c_void) -> c_int,
    ) -> c_int;
    fn goblin_ld_parse(text: *const raw::RedisModuleString, out: *mut LongDouble) -> c_int;
    fn goblin_ld_format(
        ctx: *mut raw::RedisModuleCtx,
        value: *const LongDouble,
    ) -> *mut raw::RedisModuleString;
    fn goblin_ld_reply(ctx: *mut raw::RedisModuleCtx, value: *const LongDouble) -> c_int;
    fn goblin_ld_from_i64(value: i64, out: *mut LongDouble);
    fn goblin_ld_max(out: *mut LongDouble);
    fn goblin_ld_neg(value: *const LongDouble, out: *mut LongDouble);
    fn goblin_ld_add(a: *const LongDouble, b: *const LongDouble, out: *mut LongDouble);
    fn goblin_ld_sub(a: *const LongDouble, b: *const LongDouble, out: *mut LongDouble);
    fn goblin_ld_cmp(a: *const LongDouble, b: *const LongDouble) -> c_int;
    fn goblin_ld_is_inf(value: *const LongDouble) -> c_int;
}

/// Finds the server's long double functions; `false` if it lacks one (load time).
pub(super) fn init() -> bool {
    // SAFETY: a pointer written by `RedisModule_Init`; the shim only stores what it finds.
    let get_api = unsafe { raw::RedisModule_GetApi };
    match get_api {
        // SAFETY: the server's own GetApi, called at load on the main thread.
        Some(get_api) => unsafe { goblin_ld_init(get_api) == 1 },
        None => false,
    }
}

/// Runs `op` on a fresh slot and returns it.
fn computed(op: impl FnOnce(*mut LongDouble)) -> LongDouble {
    let mut out = LongDouble([0; 16]);
    op(&mut out);
    out
}

impl LongDouble {
    pub fn from_i64(value: i64) -> LongDouble {
        // SAFETY: a valid out slot.
        computed(|out| unsafe { goblin_ld_from_i64(value, out) })
    }

    /// The largest finite long double: the default bounds of BYFLOAT are its two signs.
    pub fn max() -> LongDouble {
        // SAFETY: a valid out slot.
        computed(|out| unsafe { goblin_ld_max(out) })
    }

    pub fn negated(self) -> LongDouble {
        // SAFETY: valid in and out slots.
        computed(|out| unsafe { goblin_ld_neg(&self, out) })
    }

    pub fn is_infinite(self) -> bool {
        // SAFETY: a valid slot.
        unsafe { goblin_ld_is_inf(&self) != 0 }
    }

    /// An argument, by the server's own parser (`string2ld`, INCRBYFLOAT's).
    pub fn parse(arg: Arg<'_>) -> Option<LongDouble> {
        let mut out = LongDouble([0; 16]);
        // SAFETY: a live argument and a valid out slot.
        let ok = unsafe { goblin_ld_parse(arg.raw(), &mut out) } == 1;
        ok.then_some(out)
    }

    /// A stored value, by the same parser.
    pub fn parse_bytes(ctx: &Ctx, bytes: &[u8]) -> Option<LongDouble> {
        let ptr = if bytes.is_empty() {
            c"".as_ptr()
        } else {
            bytes.as_ptr().cast()
        };
        let mut out = LongDouble([0; 16]);
        // SAFETY: a live context; the string is created from a live buffer, parsed once and
        // freed once.
        unsafe {
            let text = api!(RedisModule_CreateString)(ctx.raw(), ptr, bytes.len());
            let ok = goblin_ld_parse(text, &mut out) == 1;
            api!(RedisModule_FreeString)(ctx.raw(), text);
            ok.then_some(out)
        }
    }

    /// The value as INCRBYFLOAT prints and stores it.
    pub fn human(self, ctx: &Ctx) -> Vec<u8> {
        // SAFETY: a live context; the server's string is read, copied and freed once.
        unsafe {
            let text = goblin_ld_format(ctx.raw(), &self);
            let mut len = 0usize;
            let data = api!(RedisModule_StringPtrLen)(text, &mut len);
            let bytes = if data.is_null() || len == 0 {
                Vec::new()
            } else {
                std::slice::from_raw_parts(data.cast::<u8>(), len).to_vec()
            };
            api!(RedisModule_FreeString)(ctx.raw(), text);
            bytes
        }
    }

    /// Replies with the value: a bulk string in RESP2, a double in RESP3, in the human form.
    pub(super) fn reply(self, ctx: *mut raw::RedisModuleCtx) {
        // SAFETY: a live context.
        unsafe {
            goblin_ld_reply(ctx, &self);
        }
    }
}

impl std::fmt::Debug for LongDouble {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LongDouble(..)")
    }
}

impl PartialEq for LongDouble {
    fn eq(&self, other: &Self) -> bool {
        self.compare(*other) == Ordering::Equal
    }
}

impl Amount for LongDouble {
    fn checked_add(self, other: LongDouble) -> Option<LongDouble> {
        // SAFETY: valid in and out slots.
        let sum = computed(|out| unsafe { goblin_ld_add(&self, &other, out) });
        (!sum.is_infinite()).then_some(sum)
    }

    fn checked_sub(self, other: LongDouble) -> Option<LongDouble> {
        // SAFETY: valid in and out slots.
        let difference = computed(|out| unsafe { goblin_ld_sub(&self, &other, out) });
        (!difference.is_infinite()).then_some(difference)
    }

    fn compare(self, other: LongDouble) -> Ordering {
        // SAFETY: valid slots.
        match unsafe { goblin_ld_cmp(&self, &other) } {
            c if c < 0 => Ordering::Less,
            0 => Ordering::Equal,
            _ => Ordering::Greater,
        }
    }

    fn non_negative(self) -> bool {
        self.compare(LongDouble::from_i64(0)) != Ordering::Less
    }
}
