//! A line of GOBLIN.BZWINDOW waiters with mixed windows and limits, served as the module serves
//! it (the eviction of what left every waiting window, the rooms, the plan), against the zwindow
//! model: each waiter in the order it came, as its own GOBLIN.ZWINDOW call on the window its
//! predecessors' grants left; nobody who fits passed over, nobody who does not served, and the
//! next look when the first member leaves a waiting window.
#![no_main]

use goblin_core::waitlist::model::{case_from, serve_and_check};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((set, waiters, now_ms, out_of_memory)) = case_from(data) {
        serve_and_check(&set, &waiters, now_ms, out_of_memory);
    }
});
