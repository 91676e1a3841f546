//! Command arguments, borrowed from the server for the duration of one call, and read in order.

use std::ffi::c_int;
use std::marker::PhantomData;
use std::ptr::NonNull;

use goblin_core::clock::Now;
use goblin_core::decimal::{exact_integer_double, parse_integer};
use goblin_core::word::Word;
use redis_module::raw;

use super::api::api;
use super::error::CommandError;

extern "C" {
    fn goblin_parse_double(text: *const std::ffi::c_char, len: usize, out: *mut f64) -> c_int;
}

/// One command argument, borrowed from the server for the duration of the call.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct Arg<'call> {
    ptr: NonNull<raw::RedisModuleString>,
    _call: PhantomData<&'call ()>,
}

impl<'call> Arg<'call> {
    pub(super) fn raw(self) -> *mut raw::RedisModuleString {
        self.ptr.as_ptr()
    }

    /// A string of the server's, as an argument, for as long as the caller keeps it alive.
    ///
    /// # Safety
    /// `ptr` is a live, non-NULL string that outlives every use of the returned value.
    pub(super) unsafe fn from_raw(ptr: *mut raw::RedisModuleString) -> Arg<'call> {
        Arg {
            // SAFETY: the caller's promise.
            ptr: unsafe { NonNull::new_unchecked(ptr) },
            _call: PhantomData,
        }
    }

    /// Views the server's `argv` in place, without a copy or a retain.
    ///
    /// # Safety
    /// `argv` holds `argc` non-NULL strings that live for `'call`.
    pub(super) unsafe fn view(
        argv: *mut *mut raw::RedisModuleString,
        argc: c_int,
    ) -> &'call [Arg<'call>] {
        match usize::try_from(argc) {
            // SAFETY: the caller's promise; `Arg` is a transparent non-null pointer, so the
            // array can be viewed as it is.
            Ok(len) if len > 0 && !argv.is_null() => unsafe {
                std::slice::from_raw_parts(argv.cast::<Arg<'call>>(), len)
            },
            _ => &[],
        }
    }

    /// The argument's bytes (binary safe).
    pub fn as_bytes(self) -> &'call [u8] {
        let mut len = 0usize;
        // SAFETY: the server keeps argv alive until the command returns, and `'call` ends there.
        unsafe {
            let data = api!(RedisModule_StringPtrLen)(self.raw(), &mut len);
            if data.is_null() || len == 0 {
                return &[];
            }
            std::slice::from_raw_parts(data.cast::<u8>(), len)
        }
    }

    /// A 64-bit integer, by the server's own parser (the one INCRBY and EXPIRE use).
    ///
    /// A plain integer, what clients send, is read here by `parse_integer`, the port of that
    /// parser (`string2ll`): the same texts, the same values, without a call into the server
    /// (about 60 instructions an argument). Any other text is the server's to decide.
    pub fn to_i64(self) -> Option<i64> {
        if let Some(value) = parse_integer(self.as_bytes()) {
            return Some(value);
        }
        let mut value = 0;
        // SAFETY: a live argument and a valid out pointer.
        let status = unsafe { api!(RedisModule_StringToLongLong)(self.raw(), &mut value) };
        (status == raw::REDISMODULE_OK as c_int).then_some(value)
    }

    /// A double, by the server's own parser (the one ZADD uses). May be infinite.
    ///
    /// A plain integer a double holds exactly is read here (`exact_integer_double`): every
    /// parser reads it so, and the server's costs about 250 instructions. Any other text is the
    /// server's.
    pub fn to_f64(self) -> Option<f64> {
        if let Some(value) = exact_integer_double(self.as_bytes()) {
            return Some(value);
        }
        let mut value = 0.0;
        // SAFETY: a live argument and a valid out pointer.
        let status = unsafe { api!(RedisModule_StringToDouble)(self.raw(), &mut value) };
        (status == raw::REDISMODULE_OK as c_int).then_some(value)
    }

    /// A double, as Redis parses one (`string2d`: `strtod` over the whole text), the same on
    /// every host: Valkey's own parser refuses hexadecimal floats that Redis reads.
    ///
    /// A plain integer a double holds exactly is read here, as `to_f64` reads it (`strtod` costs
    /// about 450 instructions).
    pub fn to_f64_as_redis(self) -> Option<f64> {
        if let Some(value) = exact_integer_double(self.as_bytes()) {
            return Some(value);
        }
        let mut len = 0usize;
        let mut value = 0.0;
        // SAFETY: the server's argument text, NUL-terminated and live for the call.
        let parsed = unsafe {
            let text = api!(RedisModule_StringPtrLen)(self.raw(), &mut len);
            !text.is_null() && goblin_parse_double(text, len, &mut value) == 1
        };
        parsed.then_some(value)
    }

    /// A finite double, by the server's own parser, or the error ZADD gives for a bad score.
    pub fn to_finite_f64(self) -> Result<f64, CommandError> {
        self.to_f64()
            .filter(|value| value.is_finite())
            .ok_or(CommandError::NotFloat)
    }

    /// An integer of at least 1: a cost (`COST`), GCRA's `tokens_per_period` and `TOKENS`.
    pub fn to_count(self) -> Result<i64, CommandError> {
        match self.to_i64() {
            None => Err(CommandError::NotInteger),
            Some(value) if value < 1 => Err(super::error::AT_LEAST_ONE),
            Some(value) => Ok(value),
        }
    }

    /// A blocking command's timeout, in seconds as BLPOP reads it, as whole milliseconds rounded
    /// up (0: wait for ever).
    pub fn to_timeout_ms(self) -> Result<i64, CommandError> {
        use super::error::timeout::{NEGATIVE, NOT_A_FLOAT, OUT_OF_RANGE};
        // Whole seconds, what clients mostly send, whose milliseconds a double holds exactly
        // (up to 2^53): the same milliseconds as the double's below, without it.
        const EXACT_SECONDS: i64 = (1 << f64::MANTISSA_DIGITS) / 1000;
        if let Some(seconds) =
            parse_integer(self.as_bytes()).filter(|s| (0..=EXACT_SECONDS).contains(s))
        {
            return Ok(seconds * 1000);
        }
        let seconds = self.to_f64().filter(|s| !s.is_nan()).ok_or(NOT_A_FLOAT)?;
        let ms = (seconds * 1000.0).ceil();
        if ms >= 9_223_372_036_854_775_808.0 {
            return Err(OUT_OF_RANGE);
        }
        if ms < 0.0 {
            return Err(NEGATIVE);
        }
        Ok(ms as i64)
    }

    /// A time: `*` for the server's clock, or the caller's, a finite double. The one reader of
    /// every command's `now`.
    pub fn to_now(self) -> Result<Now, CommandError> {
        // The text once (each read is a call into the server): a plain integer is a time
        // already, as `to_f64` reads it.
        let text = self.as_bytes();
        if text == b"*" {
            return Ok(Now::Server);
        }
        match exact_integer_double(text) {
            Some(seconds) => Ok(Now::Caller(seconds)),
            None => self.to_finite_f64().map(Now::Caller),
        }
    }

    /// Whether the argument names the option `token`, compared as the server compares option
    /// names (see `goblin_core::word`).
    pub fn is(self, token: &str) -> bool {
        self.word().is(token)
    }

    /// The argument as an option name, read once for comparing against many tokens.
    pub fn word(self) -> Word<'call> {
        Word::of(self.as_bytes())
    }
}

impl std::fmt::Debug for Arg<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_bytes()))
    }
}

/// The arguments after the command name, read in order by a command's parser. Running out is
/// the arity error; so is one left over after the last.
pub struct Args<'a, 'call> {
    rest: std::slice::Iter<'a, Arg<'call>>,
}

impl<'a, 'call> Args<'a, 'call> {
    /// `argv` without the command name.
    pub fn after_name(argv: &'a [Arg<'call>]) -> Self {
        Args {
            rest: argv.get(1..).unwrap_or(&[]).iter(),
        }
    }

    /// The next argument, which the grammar requires.
    pub fn next(&mut self) -> Result<Arg<'call>, CommandError> {
        self.rest.next().copied().ok_or(CommandError::WrongArity)
    }

    /// How many arguments are left.
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// Everything left, for a grammar of options in any order.
    pub fn rest(self) -> &'a [Arg<'call>] {
        self.rest.as_slice()
    }

    /// The grammar is complete: nothing may be left.
    pub fn finish(self) -> Result<(), CommandError> {
        match self.rest.len() {
            0 => Ok(()),
            _ => Err(CommandError::WrongArity),
        }
    }
}
