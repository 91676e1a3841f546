//! GOBLIN.ZWINDOW's pure core: cutoff, expiry and the admit decision, on any doubles.
#![no_main]

use goblin_core::error::CommandError;
use goblin_core::window::{cutoff, decide, expiry, Verdict, WindowExpiry};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 32 {
        return;
    }
    let word = |i: usize| u64::from_le_bytes(data[i..i + 8].try_into().unwrap());
    let (now, window) = (f64::from_bits(word(0)), f64::from_bits(word(8)));
    let limit = word(16) as i64;
    let in_window = (word(24) % 1_000_000) as usize;
    let now_ms = 1_700_000_000_000i64;

    // The command only passes finite doubles; the core must not panic on them.
    if now.is_finite() && window.is_finite() {
        let _ = cutoff(now, window);
        match expiry(window, now_ms, "goblin.zwindow") {
            Ok(WindowExpiry::At(at)) => {
                assert!(window > 0.0);
                assert!(at > now_ms, "a positive window expires in the future");
                // Rounded up: never shorter than the window.
                assert!((at - now_ms) as f64 >= window * 1000.0);
            }
            Ok(WindowExpiry::Immediately) => assert!(window <= 0.0),
            Err(CommandError::InvalidExpire(_)) => {
                assert!(window * 1000.0 + now_ms as f64 >= 9.2e18)
            }
            Err(other) => panic!("unexpected {other:?}"),
        }
    }

    let holds = data.len() > 32 && data[32] & 1 == 1;
    let verdict = decide(in_window, limit, || holds);
    let room = (in_window as i64) < limit;
    assert_eq!(verdict == Verdict::Grant, room || holds);
});
