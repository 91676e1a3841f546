//! Fencing tokens: the number each lock or lease grant carries when its caller asks (`FENCE`),
//! larger than every token granted before it for the same key, so that a resource that
//! remembers the largest token it has seen can refuse a holder whose lease ran out while it was
//! paused.
//!
//! A token is a time in microseconds, made strictly increasing:
//!
//! ```text
//! token = max(last + 1, stored + 1, clock_us)
//! ```
//!
//! - `last`: the largest token this server minted since it started or was promoted (kept in
//!   memory; at the start, and when a replica is promoted, it is set to the clock plus a
//!   margin, `fence-margin-ms`);
//! - `stored`: the latest token granted for the key (and the holder's own, for a lease), if it
//!   is still stored (replicated with the grant, so it survives a restart from the RDB or the
//!   AOF, and a failover that did not lose it);
//! - `clock_us`: the server's clock, from the same command-time snapshot as its expiries.
//!
//! Within one server, tokens only grow, whatever the clock does (`last + 1`). Across a restart
//! or a failover, a token minted afterwards is larger than one minted before as long as the
//! clock of the server minting now is not behind the clock of the one that minted before by
//! more than the margin plus the time between the two grants: a failover takes seconds, and
//! the margin (1 s by default) covers clocks kept within NTP's usual bounds. Where a server
//! reads a stored token it did not mint that is ahead of its clock by more than the margin
//! (`evidence`), its clock is behind one it must exceed, and it refuses to mint until its
//! clock catches up (`behind`) rather than promise what it cannot.

/// Microseconds in a millisecond.
const US_PER_MS: i64 = 1000;

/// The next token, after `last` (the largest minted here), `stored` (the largest stored for
/// the key), at `clock_us`.
pub fn mint(last: i64, stored: Option<i64>, clock_us: i64) -> i64 {
    let floor = stored.map_or(last, |stored| stored.max(last));
    floor.saturating_add(1).max(clock_us)
}

/// Where the tokens minted here start, on a server started or promoted at `clock_us`: the
/// clock plus the margin, so that they exceed any minted before by a server whose clock was
/// ahead of this one's by less than the margin.
pub fn floor_at(clock_us: i64, margin_ms: i64) -> i64 {
    clock_us.saturating_add(margin_ms.saturating_mul(US_PER_MS))
}

/// The furthest a clock can plausibly be behind another's: a token stored further ahead than
/// this was written by something other than a server's clock (a hand-made value), and says
/// nothing about this server's clock.
pub const PLAUSIBLE_SKEW_MS: i64 = 3_600_000;

/// What a token stored for a key, `stored`, says about this server's clock, which minted
/// `last` last and reads `clock_us` now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// Nothing stored, or a token this server could have minted: no more than the margin
    /// ahead of its clock, or no more than it minted itself.
    InReach,
    /// Ahead of the clock by more than the margin and less than [`PLAUSIBLE_SKEW_MS`]: the
    /// clock is behind one that minted before it. A token minted for another key may not exceed
    /// one already handed out: the server refuses to mint anywhere until it catches up.
    ClockBehind(i64),
    /// Further ahead still: a value written by hand. Only its own key refuses to mint (a token
    /// above it would make the resource refuse every later holder).
    OutOfReach,
}

/// Reads `stored` as [`Stored`] says.
pub fn evidence(stored: Option<i64>, last: i64, clock_us: i64, margin_ms: i64) -> Stored {
    match stored {
        Some(token) if token > last && behind(token, clock_us, margin_ms) => {
            if behind(token, clock_us, margin_ms.saturating_add(PLAUSIBLE_SKEW_MS)) {
                Stored::OutOfReach
            } else {
                Stored::ClockBehind(token)
            }
        }
        _ => Stored::InReach,
    }
}

/// Whether `seen`, the largest token stored here that showed the clock behind, is still ahead
/// of the clock by more than the margin: until it is not, this server refuses to mint.
pub fn behind(seen: i64, clock_us: i64, margin_ms: i64) -> bool {
    seen > floor_at(clock_us, margin_ms)
}

/// The name of the key that stores the token of `key`'s holder (`member`, for a lease: each
/// holder of a semaphore has its own). It shares the key's cluster slot (its hash tag, or the
/// whole key made a tag) and no command of a client writes it by accident (a NUL byte, then
/// `goblin:fence`). `None` for a key whose slot no tag can name (no tag of its own, and a `}`,
/// or empty).
pub fn token_key(key: &[u8], member: Option<&[u8]>) -> Option<Vec<u8>> {
    const SUFFIX: &[u8] = b"\0goblin:fence\0";
    let tag = crate::waitlist::slot_tag(key)?;
    let mut name = Vec::with_capacity(tag.len() + 3 + SUFFIX.len() + key.len());
    name.push(b'{');
    name.extend_from_slice(tag);
    name.push(b'}');
    name.extend_from_slice(SUFFIX);
    name.extend_from_slice(key);
    if let Some(member) = member {
        name.push(0);
        name.extend_from_slice(member);
    }
    Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000_000;

    #[test]
    fn tokens_are_the_clock_when_it_moves_on() {
        assert_eq!(mint(NOW - 5, None, NOW), NOW);
        assert_eq!(mint(NOW - 5, Some(NOW - 9), NOW), NOW);
    }

    #[test]
    fn tokens_grow_whatever_the_clock_does() {
        // Several in one microsecond, or a clock stepped back.
        assert_eq!(mint(NOW, None, NOW), NOW + 1);
        assert_eq!(mint(NOW + 1, None, NOW - 1_000_000), NOW + 2);
        // A holder's token stored ahead of anything minted here.
        assert_eq!(mint(NOW, Some(NOW + 500), NOW), NOW + 501);
        assert_eq!(
            mint(i64::MAX, None, NOW),
            i64::MAX,
            "saturates, never wraps"
        );
    }

    #[test]
    fn a_start_or_a_promotion_starts_a_margin_ahead() {
        assert_eq!(floor_at(NOW, 1000), NOW + 1_000_000);
        assert_eq!(mint(floor_at(NOW, 1000), None, NOW), NOW + 1_000_001);
    }

    #[test]
    fn a_stored_token_beyond_the_margin_says_the_clock_is_behind() {
        let last = NOW;
        assert_eq!(evidence(None, last, NOW, 1000), Stored::InReach);
        assert_eq!(
            evidence(Some(NOW + 1_000_000), last, NOW, 1000),
            Stored::InReach
        );
        assert_eq!(
            evidence(Some(NOW + 1_000_001), last, NOW, 1000),
            Stored::ClockBehind(NOW + 1_000_001)
        );
        assert_eq!(
            evidence(Some(NOW + 5_000_000), last, NOW, 10_000),
            Stored::InReach
        );
        // One this server minted (its start's floor, or a burst faster than its clock) is no
        // evidence: within a millisecond of the start, on a clock of whole milliseconds.
        let start = floor_at(NOW, 1000);
        assert_eq!(
            evidence(Some(start + 1), start + 1, NOW, 1000),
            Stored::InReach
        );
        // An hour and more beyond the margin is no clock's: only its key refuses.
        let hour_us = PLAUSIBLE_SKEW_MS * 1000;
        assert_eq!(
            evidence(Some(NOW + 1_000_000 + hour_us), last, NOW, 1000),
            Stored::ClockBehind(NOW + 1_000_000 + hour_us)
        );
        assert_eq!(
            evidence(Some(NOW + 1_000_001 + hour_us), last, NOW, 1000),
            Stored::OutOfReach
        );
        assert_eq!(
            evidence(Some(i64::MAX), last, NOW, 1000),
            Stored::OutOfReach
        );
        // The refusal lasts until the clock comes within the margin of what was seen.
        assert!(behind(NOW + 1_000_001, NOW, 1000));
        assert!(!behind(NOW + 1_000_001, NOW + 1, 1000));
    }

    #[test]
    fn the_token_key_shares_the_slot_and_names_key_and_member() {
        assert_eq!(
            token_key(b"lock:a", None).unwrap(),
            b"{lock:a}\0goblin:fence\0lock:a"
        );
        assert_eq!(
            token_key(b"{u1}:sem", Some(b"w1")).unwrap(),
            b"{u1}\0goblin:fence\0{u1}:sem\0w1"
        );
        assert_ne!(token_key(b"{u1}:a", None), token_key(b"{u1}:b", None));
        assert_eq!(token_key(b"a}b", None), None);
        assert_eq!(token_key(b"", None), None);
    }
}
