//! A readers-writer lock under generated calls (tries, waits, releases, extends, promotions,
//! demotions, timeouts, time passing, the server out of memory), run the module's way (the key
//! as the server holds it, the line, the plan, its timer) and the plainest reading of the rules
//! side by side: the same answers, the same waiters served, the same holders after every call.
#![no_main]

use goblin_core::rwlock::model::{calls_from, run_and_check};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    run_and_check(&calls_from(data));
});
