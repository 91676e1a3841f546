//! GOBLIN.ZWINDOW's whole algorithm (evict with its budget and ties, count, stale members,
//! decide, record) on the in-memory sorted set, call for call against the plainest reading of
//! the contract: the Lua idiom with lease refresh, which evicts everything at once. Also the
//! expiry and the decision on any doubles.
#![no_main]

use goblin_core::zwindow::model::ModelWindow;
use goblin_core::zwindow::{
    admit, cutoff, decide, evict, expiry, Admission, ExpireOverflow, SortedWindow, SortedWindowMut,
    Verdict, WindowExpiry, EVICTION_BUDGET,
};
use libfuzzer_sys::fuzz_target;

fn properties_of_expiry_and_decide(data: &[u8]) {
    let word = |i: usize| u64::from_le_bytes(data[i..i + 8].try_into().unwrap());
    let (now, window) = (f64::from_bits(word(0)), f64::from_bits(word(8)));
    let limit = word(16) as i64;
    let in_window = (word(24) % 1_000_000) as usize;
    let now_ms = 1_700_000_000_000i64;

    // The command only passes finite doubles; the core must not panic on them.
    if now.is_finite() && window.is_finite() {
        let _ = cutoff(now, window);
        match expiry(window, now_ms) {
            Ok(WindowExpiry::At(at)) => {
                assert!(window > 0.0);
                assert!(at > now_ms, "a positive window expires in the future");
                // Rounded up: never shorter than the window.
                assert!((at - now_ms) as f64 >= window * 1000.0);
            }
            Ok(WindowExpiry::Immediately) => assert!(window <= 0.0),
            Err(ExpireOverflow) => assert!(window * 1000.0 + now_ms as f64 >= 9.2e18),
        }
    }

    let holds = data[32] & 1 == 1;
    let verdict = decide(in_window, 1, limit, || holds);
    let room = (in_window as i64) < limit;
    assert_eq!(verdict == Verdict::Grant, room || holds);
}

/// The contract, plainly: evict all at or below the cutoff, refresh a holder, admit below the
/// limit, reject otherwise. Returns (granted, was a holder).
fn reference(
    set: &mut Vec<(Vec<u8>, f64)>,
    now: f64,
    window: f64,
    limit: i64,
    member: &[u8],
) -> (bool, bool) {
    let cutoff = now - window;
    set.retain(|(_, score)| *score > cutoff);
    if let Some(slot) = set.iter_mut().find(|(m, _)| m == member) {
        slot.1 = now;
        return (true, true);
    }
    if (set.len() as i64) < limit {
        set.push((member.to_vec(), now));
        return (true, false);
    }
    (false, false)
}

fn sorted(mut members: Vec<(Vec<u8>, f64)>) -> Vec<(Vec<u8>, f64)> {
    members.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    members
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 33 {
        return;
    }
    properties_of_expiry_and_decide(data);

    // Then a sequence of calls, five bytes each, on one key, with one window: the cutoff only
    // moves forward. (Were it to move back, a member that a sliced eviction had not yet
    // removed would count again, where the plain reading removed it at once: the README says so.)
    let window = [0.0, 1.0, 2.5, 10.0, 30.0, -1.0][usize::from(data[32] % 6)];
    let mut set = ModelWindow::default();
    let mut plain: Vec<(Vec<u8>, f64)> = Vec::new();
    let mut now = 1000.0f64;
    for (step, call) in data[33..].chunks_exact(5).enumerate() {
        // A quarter-second clock, so members tie.
        now += f64::from(call[0] % 16) * 0.25;
        let limit = i64::from((call[1] ^ call[2]) % 6) - 1;
        let member = [b'm', call[3] % 8];
        if call[4] == 0xff {
            // A backlog larger than one call's budget, all about to leave the window.
            for i in 0..(EVICTION_BUDGET + 300) {
                let old = format!("old{step}-{i}");
                let score = now - 40.0 + f64::from((i % 7) as u8);
                set.add(score, old.as_bytes());
                plain.push((old.into_bytes(), score));
            }
        }
        let cut = cutoff(now, window);
        let before = set.cardinality();
        let eviction = evict(&mut set, cut);
        let admission = admit(&mut set, &eviction, cut, limit, now, &member);
        let (granted, holder) = reference(&mut plain, now, window, limit, &member);

        assert_eq!(admission.granted(), granted, "step {step}: {admission:?}");
        match admission {
            Admission::Refreshed(_) => assert!(holder, "step {step}: refreshed a newcomer"),
            Admission::Admitted(_) => assert!(!holder, "step {step}: admitted a holder"),
            Admission::Rejected => {}
        }
        // Eviction: exactly everything at or below `through`, and bounded.
        assert!(set
            .members()
            .iter()
            .all(|(m, score)| *score > eviction.through || (m[..] == member[..] && *score == now)));
        assert!(eviction.through <= cut);
        assert!(eviction.complete || eviction.count >= EVICTION_BUDGET);
        assert!(eviction.count <= before);
        // A non-positive window deletes the key of a granted call at once.
        if granted && expiry(window, 0) == Ok(WindowExpiry::Immediately) {
            set = ModelWindow::default();
            plain.clear();
            continue;
        }
        // Inside the window the two sets are the same; outside it only a backlog remains.
        let inside: Vec<_> = set
            .members()
            .into_iter()
            .filter(|(_, score)| *score > cut)
            .collect();
        assert_eq!(sorted(inside), sorted(plain.clone()), "step {step}");
        if eviction.complete {
            assert_eq!(
                set.cardinality(),
                plain.len(),
                "step {step}: a complete eviction left old members"
            );
        }
    }
});
