//! String values: read in place, and written in place so that a key keeps its TTL.

use std::ffi::c_int;
use std::ptr;

use redis_module::raw;

use super::api::api;
use super::keys::{Key, KeyKind};
use super::Arg;

impl Key<'_> {
    /// The bytes of a string key; `None` for any other kind. Valid until the next write.
    pub fn string(&self) -> Option<&[u8]> {
        if self.kind() != KeyKind::String {
            return None;
        }
        self.string_or_empty()
    }

    /// The bytes of a string key, empty for a missing key (and for an empty string: `kind`
    /// tells the two apart); `None` for any other kind. One call into the server, where
    /// `string` asks the kind first. Valid until the next write.
    pub fn string_or_empty(&self) -> Option<&[u8]> {
        let mut len = 0usize;
        let mode = raw::REDISMODULE_READ as c_int;
        // SAFETY: an open key; the server gives NULL for another type and a literal of length
        // 0 for a missing key. The slice borrows `self`, so no write can happen while it is
        // alive (DMA rule 1).
        unsafe {
            let data = api!(RedisModule_StringDMA)(self.raw(), &mut len, mode);
            if data.is_null() {
                return None;
            }
            if len == 0 {
                return Some(&[]);
            }
            Some(std::slice::from_raw_parts(data.cast::<u8>(), len))
        }
    }

    /// Makes the key a string holding `value`, one of the call's own strings (a client's
    /// token), as SET does (`RedisModule_StringSet`): whatever it held goes, its TTL with it,
    /// and the server keeps `value` by reference where it can. Nothing resized and copied, as
    /// `set_string` must for a new key (about 230 to 500 instructions).
    pub fn set_to(&mut self, value: Arg<'_>) {
        // SAFETY: an open write-mode key with no iterator, and a live string the server retains
        // or copies.
        let status = unsafe { api!(RedisModule_StringSet)(self.raw(), value.raw()) };
        if status != raw::REDISMODULE_OK as c_int {
            panic!("RedisModule_StringSet refused a key open for writing");
        }
    }

    /// Makes the key a string holding `value`, in place: unlike `RedisModule_StringSet`, the
    /// key keeps its TTL, and a counter that grows a digit reuses its allocation. A value of
    /// the length the string has (a TAT, most counts) is written over it with no resize.
    pub fn set_string(&mut self, value: &[u8]) {
        let mode = (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int;
        // SAFETY: an open write-mode key that is empty or a string (callers checked the kind);
        // DMA is re-obtained after the truncate, as the API requires, and `len` bounds the copy.
        unsafe {
            let mut len = 0usize;
            let data = api!(RedisModule_StringDMA)(self.raw(), &mut len, mode);
            if !data.is_null() && len == value.len() && len > 0 {
                ptr::copy_nonoverlapping(value.as_ptr(), data.cast::<u8>(), len);
                return;
            }
            // Truncating an empty key to 0 bytes creates nothing: an empty value is made by
            // creating a 1-byte string first, then cutting it down.
            if value.is_empty() {
                api!(RedisModule_StringTruncate)(self.raw(), 1);
            }
            if api!(RedisModule_StringTruncate)(self.raw(), value.len())
                != raw::REDISMODULE_OK as c_int
            {
                panic!("RedisModule_StringTruncate refused a string key");
            }
            let data = api!(RedisModule_StringDMA)(self.raw(), &mut len, mode);
            if data.is_null() || len != value.len() {
                panic!(
                    "RedisModule_StringDMA gave {len} bytes for a {}-byte value",
                    value.len()
                );
            }
            ptr::copy_nonoverlapping(value.as_ptr(), data.cast::<u8>(), len);
        }
    }
}
