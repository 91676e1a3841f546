//! String values: read in place, and written in place so that a key keeps its TTL.

use std::ffi::c_int;
use std::ptr;

use redis_module::raw;

use super::api::api;
use super::keys::{Key, KeyKind};

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
        }
        self.set_string_sized(value);
    }

    /// Makes the key a string holding `value`, sized for it first, then written: for a key
    /// that holds no value of its length (a free key a lock takes), one call into the server
    /// fewer than `set_string`. The string is the server's raw kind, which a later read
    /// (`string`) takes as it is: a string stored by `RedisModule_StringSet` of a client's
    /// argument (an embedded string, as SET stores it) is copied into a raw one by the first
    /// read, which costs more than this write saves (about 1,600 instructions on Redis 8.2).
    pub fn set_string_sized(&mut self, value: &[u8]) {
        let mode = (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int;
        // SAFETY: as `set_string`'s.
        unsafe {
            let mut len = 0usize;
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
