//! Sorted-set values, and the server's sorted set as the `SortedWindow` ZWINDOW's algorithm
//! (in `goblin-core`) runs on.

use std::ffi::c_int;
use std::ptr;

use goblin_core::zwindow::{SortedWindow, SortedWindowMut, Zadded};
use redis_module::raw;

use super::api::api;
use super::keys::Key;
use super::Arg;

/// Members taken per seek of the score index when removing the lowest ones.
const REMOVE_CHUNK: usize = 64;

impl<'call> Key<'call> {
    /// The score of `member`, if the key is a sorted set holding it.
    pub fn score(&self, member: Arg<'_>) -> Option<f64> {
        let mut score = 0.0;
        // SAFETY: an open key, a live member string, a valid out pointer. Errors (no such
        // member, empty key, other type) come back as a status.
        let status = unsafe { api!(RedisModule_ZsetScore)(self.raw(), member.raw(), &mut score) };
        (status == raw::REDISMODULE_OK as c_int).then_some(score)
    }

    /// Adds `member` at `score`, or moves it there. Creates the sorted set if the key is empty.
    pub fn zadd(&mut self, score: f64, member: Arg<'_>) -> Zadded {
        let mut flags: c_int = 0;
        // SAFETY: an open write-mode key that is empty or a sorted set, a finite score.
        let status =
            unsafe { api!(RedisModule_ZsetAdd)(self.raw(), score, member.raw(), &mut flags) };
        if status != raw::REDISMODULE_OK as c_int {
            panic!("RedisModule_ZsetAdd refused score {score}");
        }
        if flags & raw::REDISMODULE_ZADD_ADDED as c_int != 0 {
            Zadded::Added
        } else if flags & raw::REDISMODULE_ZADD_UPDATED as c_int != 0 {
            Zadded::Moved
        } else {
            Zadded::Unchanged
        }
    }

    /// Removes `member`; returns whether it was there. A set emptied here is deleted by the
    /// server, as ZREM does.
    pub fn zrem(&mut self, member: Arg<'_>) -> bool {
        let mut deleted: c_int = 0;
        // SAFETY: an open write-mode key that is a sorted set, a live member string.
        unsafe {
            api!(RedisModule_ZsetRem)(self.raw(), member.raw(), &mut deleted);
        }
        deleted != 0
    }

    /// Removes up to `max` members scored at or below `upper`, lowest first. Walks the score
    /// index from its lowest member in chunks: one O(log n) seek per chunk of `REMOVE_CHUNK`,
    /// then a step per member, never visiting a member above `upper`; each chunk is removed
    /// after the iterator stops. A set emptied here is deleted by the server.
    fn remove_lowest_members(&mut self, upper: f64, max: usize) -> (usize, f64) {
        let mut removed = 0;
        let mut last = f64::NEG_INFINITY;
        while removed < max {
            let mut chunk = [ptr::null_mut::<raw::RedisModuleString>(); REMOVE_CHUNK];
            let wanted = REMOVE_CHUNK.min(max - removed);
            let mut taken = 0;
            // SAFETY: an open write-mode key; every element the iterator hands out is ours to
            // free, and the iterator is stopped before any removal.
            unsafe {
                let key = self.raw();
                if api!(RedisModule_ZsetFirstInScoreRange)(key, f64::NEG_INFINITY, upper, 0, 0)
                    != raw::REDISMODULE_OK as c_int
                {
                    break;
                }
                while taken < wanted {
                    let member = api!(RedisModule_ZsetRangeCurrentElement)(key, &mut last);
                    if member.is_null() {
                        break;
                    }
                    chunk[taken] = member;
                    taken += 1;
                    if api!(RedisModule_ZsetRangeNext)(key) == 0 {
                        break;
                    }
                }
                api!(RedisModule_ZsetRangeStop)(key);
                for &member in &chunk[..taken] {
                    api!(RedisModule_ZsetRem)(key, member, ptr::null_mut());
                    api!(RedisModule_FreeString)(self.ctx.raw(), member);
                }
            }
            removed += taken;
            if taken < wanted {
                break;
            }
        }
        (removed, last)
    }

    /// The lowest score in the set, if any.
    fn lowest(&self) -> Option<f64> {
        let mut score = 0.0;
        // SAFETY: an open key; the element is freed at once and the iterator stopped.
        unsafe {
            let key = self.raw();
            let range = f64::NEG_INFINITY;
            if api!(RedisModule_ZsetFirstInScoreRange)(key, range, f64::INFINITY, 0, 0)
                != raw::REDISMODULE_OK as c_int
            {
                return None;
            }
            let member = api!(RedisModule_ZsetRangeCurrentElement)(key, &mut score);
            api!(RedisModule_ZsetRangeStop)(key);
            if member.is_null() {
                return None;
            }
            api!(RedisModule_FreeString)(self.ctx.raw(), member);
        }
        Some(score)
    }

    /// `read` of the member and score the score-range iterator stands on, after `seek` placed it
    /// (`None` if it found nothing): the member is the server's, freed here, and the iterator
    /// stopped.
    fn read_at<R>(
        &self,
        seek: impl FnOnce(*mut raw::RedisModuleKey) -> c_int,
        read: impl FnOnce(&[u8], f64) -> R,
    ) -> Option<R> {
        let mut score = 0.0;
        // SAFETY: an open key; the element is read while alive and freed once, and the
        // iterator is stopped whether or not the seek found anything.
        unsafe {
            let key = self.raw();
            if seek(key) != raw::REDISMODULE_OK as c_int {
                return None;
            }
            let member = api!(RedisModule_ZsetRangeCurrentElement)(key, &mut score);
            api!(RedisModule_ZsetRangeStop)(key);
            if member.is_null() {
                return None;
            }
            let found = read(Arg::from_raw(member).as_bytes(), score);
            api!(RedisModule_FreeString)(self.ctx.raw(), member);
            Some(found)
        }
    }

    /// How many members score above `cutoff`, counting down from the highest and stopping at
    /// `cap`: O(log n + cap).
    fn count_scored_above(&self, cutoff: f64, cap: usize) -> usize {
        let mut count = 0;
        // SAFETY: an open key; the iterator only steps (no elements are created) and is stopped.
        unsafe {
            let key = self.raw();
            if cap == 0
                || api!(RedisModule_ZsetLastInScoreRange)(key, cutoff, f64::INFINITY, 1, 0)
                    != raw::REDISMODULE_OK as c_int
            {
                return 0;
            }
            if api!(RedisModule_ZsetRangeEndReached)(key) == 0 {
                count = 1;
                while count < cap && api!(RedisModule_ZsetRangePrev)(key) != 0 {
                    count += 1;
                }
            }
            api!(RedisModule_ZsetRangeStop)(key);
        }
        count
    }
}

/// The key's sorted set, for ZWINDOW's algorithm. Generic code: the calls compile to the
/// methods above, directly.
impl<'call> SortedWindow for Key<'call> {
    type Member = Arg<'call>;

    fn lowest_score(&self) -> Option<f64> {
        self.lowest()
    }

    fn cardinality(&self) -> usize {
        self.len()
    }

    fn count_above(&self, cutoff: f64, cap: usize) -> usize {
        self.count_scored_above(cutoff, cap)
    }

    fn score(&self, member: &Arg<'call>) -> Option<f64> {
        Key::score(self, *member)
    }

    fn first_above<R>(&self, cutoff: f64, read: impl FnOnce(&[u8], f64) -> R) -> Option<R> {
        self.read_at(
            // SAFETY (for the closure's call): an open key; `cutoff` excluded, up to +inf.
            |key| unsafe {
                api!(RedisModule_ZsetFirstInScoreRange)(key, cutoff, f64::INFINITY, 1, 0)
            },
            read,
        )
    }

    fn last<R>(&self, read: impl FnOnce(&[u8], f64) -> R) -> Option<R> {
        self.read_at(
            // SAFETY (for the closure's call): an open key; the whole range.
            |key| unsafe {
                api!(RedisModule_ZsetLastInScoreRange)(key, f64::NEG_INFINITY, f64::INFINITY, 0, 0)
            },
            read,
        )
    }
}

/// The writes of ZWINDOW's algorithm, which only `effects.rs` calls, as it announces each.
impl<'call> SortedWindowMut for Key<'call> {
    fn remove_lowest(&mut self, upper: f64, max: usize) -> (usize, f64) {
        self.remove_lowest_members(upper, max)
    }

    fn add(&mut self, score: f64, member: &Arg<'call>) -> Zadded {
        self.zadd(score, *member)
    }

    fn add_bytes(&mut self, score: f64, member: &[u8]) -> Zadded {
        let member = self.ctx.string(member);
        self.zadd(score, member.arg())
    }
}
