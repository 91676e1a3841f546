//! GOBLIN.ZWINDOW's algorithm, whole: where the window starts, which members leave it and how
//! many in one call, who gets a slot, and when the key expires. It runs over a `SortedWindow`,
//! the few sorted-set operations it needs: the server's sorted set in the module, a `BTreeMap`
//! model (`model.rs`) in the unit tests and the fuzzer.

pub mod cost;
pub mod model;

/// The sorted-set reads the algorithm decides from.
pub trait SortedWindow {
    /// A member, as the store takes it (the client's argument in the server, bytes in the
    /// model).
    type Member: ?Sized;

    /// The lowest score, if the set has a member.
    fn lowest_score(&self) -> Option<f64>;
    /// The number of members (ZCARD).
    fn cardinality(&self) -> usize;
    /// How many members score above `cutoff`, counting down from the highest and stopping at
    /// `cap`.
    fn count_above(&self, cutoff: f64, cap: usize) -> usize;
    /// The score of `member`, if it is in the set.
    fn score(&self, member: &Self::Member) -> Option<f64>;
    /// `read` of the lowest member scored above `cutoff`, and its score.
    fn first_above<R>(&self, cutoff: f64, read: impl FnOnce(&[u8], f64) -> R) -> Option<R>;
    /// `read` of the highest member, and its score.
    fn last<R>(&self, read: impl FnOnce(&[u8], f64) -> R) -> Option<R>;
}

/// The sorted-set writes that carry a decision out. In the module only `effects.rs` calls
/// them, as it announces each (notifications, replication); the model's are the tests' and
/// the fuzzer's.
pub trait SortedWindowMut: SortedWindow {
    /// Removes members scored at or below `upper`, lowest first, at most `max` of them.
    /// Returns how many went and the highest score removed (`-inf` if none). A set emptied
    /// here is deleted, as ZREMRANGEBYSCORE does.
    fn remove_lowest(&mut self, upper: f64, max: usize) -> (usize, f64);
    /// Adds `member` at `score`, or moves it there; creates the set if needed.
    fn add(&mut self, score: f64, member: &Self::Member) -> Zadded;
    /// `add`, for a member the algorithm made (a COST entry).
    fn add_bytes(&mut self, score: f64, member: &[u8]) -> Zadded;
}

/// What adding a member did to the set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zadded {
    /// A new member.
    Added,
    /// An existing member, at a new score.
    Moved,
    /// An existing member, already at that score.
    Unchanged,
}

/// Members scored at or below the cutoff have left the window. Inclusive, and open to
/// `-inf` below, as `ZREMRANGEBYSCORE key -inf cutoff`.
pub fn cutoff(now: f64, window: f64) -> f64 {
    now - window
}

/// At most about this many members leave a window in one call (more only when members share
/// the last score removed). An idle window can hold a million members that all left it at
/// once; removing them in one call would block the server for a quarter of a second. Here each
/// call removes a slice (about 0.2 to 0.4 ms of work) and later calls the rest, while the
/// admit decision still counts only the members inside the window.
pub const EVICTION_BUDGET: usize = 1024;

/// What `evict` removed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Eviction {
    pub count: usize,
    /// Every member scored at or below this was removed, and nothing above it: what the
    /// replicas are told (`ZREMRANGEBYSCORE key -inf through`).
    pub through: f64,
    /// Whether no member at or below the cutoff is left.
    pub complete: bool,
}

/// Removes the members that have left the window, lowest first: all of them, or, once
/// `EVICTION_BUDGET` are gone, only the rest of those tied at the last score removed, so that
/// "everything at or below `through`" is exactly what was removed.
pub fn evict<W: SortedWindowMut>(set: &mut W, cutoff: f64) -> Eviction {
    let (count, last) = set.remove_lowest(cutoff, EVICTION_BUDGET);
    if count < EVICTION_BUDGET {
        return Eviction {
            count,
            through: cutoff,
            complete: true,
        };
    }
    // Out of budget. Every member below `last` is gone, so what is left at or below it is tied
    // at it: those go too.
    let (ties, _) = set.remove_lowest(last, usize::MAX);
    Eviction {
        count: count + ties,
        through: last,
        complete: set.lowest_score().is_none_or(|lowest| lowest > cutoff),
    }
}

/// How far to count members inside the window, when old ones are still in the set: the
/// decision only asks "fewer than `limit`?", so counting stops there.
pub fn count_cap(limit: i64) -> usize {
    usize::try_from(limit).unwrap_or(0)
}

/// Whether a window holding `in_window` members has room for a newcomer under `limit`.
pub fn fits(in_window: usize, limit: i64) -> bool {
    fits_permits(in_window, 1, limit)
}

/// Whether a window holding `in_window` members has room for `permits` more under `limit`,
/// all of them (a holder of several permits takes as many slots).
pub fn fits_permits(in_window: usize, permits: usize, limit: i64) -> bool {
    in_window
        .checked_add(permits)
        .and_then(|taken| i64::try_from(taken).ok())
        .is_some_and(|taken| taken <= limit)
}

/// The most slots one request takes (`PERMITS n`): each is a member of the set, written and
/// replicated, so a call's work and memory stay bounded whatever it asks (a semaphore of more
/// units than this is a rate limiter's `COST`).
pub const MOST_PERMITS: usize = 10_000;

/// The member that holds permit `index` (from 0) of a holder of several. The slots are members
/// of the set like any other: without a `separator`, `member` itself for the first and then
/// `member`, a NUL byte and the index, which no member a caller names by accident is; with one
/// (`SEPARATOR sep`), `member`, `sep` and the index for every slot, the first too (`w1_0`,
/// `w1_1`: the names redis-semaphore's MultiSemaphore gives its permits).
pub fn permit_member(member: &[u8], index: usize, separator: Option<&[u8]>) -> Vec<u8> {
    let mut name = member.to_vec();
    match separator {
        Some(separator) => name.extend_from_slice(separator),
        None if index == 0 => return name,
        None => name.push(0),
    }
    name.extend_from_slice(index.to_string().as_bytes());
    name
}

/// What a window holds at `cutoff`, after `evict`: what a line's look at it needs.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Room {
    /// The members inside the window, counted up to the limit asked for (all that "is there
    /// room, and for how many?" needs).
    pub in_window: usize,
    /// The lowest score inside the window: the first member to leave it.
    pub oldest: Option<f64>,
}

/// The room at `cutoff` for `limit` slots, after `eviction` (the set's length is the count
/// when the eviction took everything at or below this very cutoff). Reads only.
pub fn room<W: SortedWindow>(set: &W, eviction: &Eviction, cutoff: f64, limit: i64) -> Room {
    let in_window = if eviction.complete && cutoff == eviction.through {
        set.cardinality()
    } else {
        set.count_above(cutoff, count_cap(limit))
    };
    Room {
        in_window,
        oldest: set.first_above(cutoff, |_, score| score),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// `member` gets its slot at `now`: a newcomer is admitted, a holder refreshed.
    Grant,
    /// A newcomer and the window is full: nothing is added, the TTL is untouched.
    Reject,
}

/// Decides after eviction, with `in_window` members left, for a request of `permits` slots.
/// `holds_slot` (is `member` one of them?) is asked only when the window is full: with room,
/// newcomer and holder are granted alike, and a lookup saved is a sorted-set search saved on
/// the hot path.
pub fn decide(
    in_window: usize,
    permits: usize,
    limit: i64,
    holds_slot: impl FnOnce() -> bool,
) -> Verdict {
    // A holder renewing its lease keeps its slots, even if `limit` has since shrunk.
    if fits_permits(in_window, permits, limit) || holds_slot() {
        Verdict::Grant
    } else {
        Verdict::Reject
    }
}

/// What a call did for its member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// A newcomer got a slot: added to the set, or, if it was still waiting to be evicted,
    /// moved back into the window.
    Admitted(Zadded),
    /// A holder renewed its slot.
    Refreshed(Zadded),
    /// A newcomer and the window was full.
    Rejected,
}

impl Admission {
    pub fn granted(self) -> bool {
        !matches!(self, Admission::Rejected)
    }

    /// What the set did, when the member was recorded.
    pub fn zadded(self) -> Option<Zadded> {
        match self {
            Admission::Admitted(zadded) | Admission::Refreshed(zadded) => Some(zadded),
            Admission::Rejected => None,
        }
    }

    /// What a granted call did, once its member is recorded at `now` (the set said `zadded`).
    pub fn of(seat: Seat, zadded: Zadded) -> Admission {
        match seat {
            Seat::Newcomer => Admission::Admitted(zadded),
            Seat::Holder => Admission::Refreshed(zadded),
        }
    }
}

/// Who is granted a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seat {
    /// A member not in the window: not in the set, or still in it after it left the window
    /// (a sliced eviction has not reached it), which comes back as a newcomer though the set
    /// only moves its score.
    Newcomer,
    /// A member inside the window, renewing its slot.
    Holder,
}

/// Whether `member` holds its slot inside the window at `cutoff`: a grant to it renews the slot
/// (`Seat::Holder`), and keeps its fencing token.
pub fn holds<W: SortedWindow>(set: &W, member: &W::Member, cutoff: f64) -> bool {
    set.score(member).is_some_and(|score| score > cutoff)
}

/// Whether `member` gets its `permits` slots at this call (1 for a lease; a holder of several
/// is known by its first, `member` itself), after `evict`, with `limit` slots: its seat, or
/// `None` for a newcomer when the window has no room for them. Reads only: the caller records
/// the members at `now` (the module through its effects, `admit` on a set of its own).
pub fn seat<W: SortedWindow>(
    set: &W,
    eviction: &Eviction,
    cutoff: f64,
    limit: i64,
    member: &W::Member,
    permits: usize,
) -> Option<Seat> {
    let seating = seating(set, eviction, cutoff, limit, member, permits, true)?;
    // Asked now, so known now: `after` does not look at what the set did.
    Some(seating.after(Zadded::Unchanged))
}

/// Who is granted, as far as the set tells before the member is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seating {
    /// Known now.
    Known(Seat),
    /// Granted, a newcomer or a holder as recording its member tells (`after`): after a
    /// complete eviction every member left is inside the window, so one the set already had
    /// holds its slot, and one it adds is a newcomer.
    ByRecord,
}

impl Seating {
    /// The seat, once the first member is recorded and the set said `zadded`.
    pub fn after(self, zadded: Zadded) -> Seat {
        match self {
            Seating::Known(seat) => seat,
            Seating::ByRecord if zadded == Zadded::Added => Seat::Newcomer,
            Seating::ByRecord => Seat::Holder,
        }
    }
}

/// `seat`, for a caller that can learn a holder from a newcomer by recording its member: unless
/// it needs to know first (`now`: a grant that keeps a holder's fencing token), a window with
/// room for a newcomer after a complete eviction is not asked whether the member is in it,
/// which is one more search of the set (about 800 instructions in a compact one), the search
/// recording it makes anyway.
pub fn seating<W: SortedWindow>(
    set: &W,
    eviction: &Eviction,
    cutoff: f64,
    limit: i64,
    member: &W::Member,
    permits: usize,
    now: bool,
) -> Option<Seating> {
    // Only members inside the window count, even when old ones are still waiting to go. The
    // set's length bounds that count, so it settles "is there room?" whenever it leaves room;
    // only a full-looking set with old members left needs counting.
    let len = set.cardinality();
    let in_window = if eviction.complete || fits_permits(len, permits, limit) {
        len
    } else {
        set.count_above(cutoff, count_cap(limit))
    };
    // Asked at most once: a full window asks it to let a holder renew.
    let mut asked = None;
    let verdict = decide(in_window, permits, limit, || {
        *asked.insert(holds(set, member, cutoff))
    });
    let seat = |holds: bool| Seating::Known(if holds { Seat::Holder } else { Seat::Newcomer });
    match (verdict, asked) {
        (Verdict::Reject, _) => None,
        (Verdict::Grant, Some(holds)) => Some(seat(holds)),
        // With room, newcomer and holder are granted alike, and asked apart only now.
        (Verdict::Grant, None) if eviction.complete && !now => Some(Seating::ByRecord),
        (Verdict::Grant, None) => Some(seat(holds(set, member, cutoff))),
    }
}

/// The whole step on a set the caller owns (the model, the fuzzer): `seat`, then the member
/// recorded at `now`.
pub fn admit<W: SortedWindowMut>(
    set: &mut W,
    eviction: &Eviction,
    cutoff: f64,
    limit: i64,
    now: f64,
    member: &W::Member,
) -> Admission {
    match seat(set, eviction, cutoff, limit, member, 1) {
        None => Admission::Rejected,
        Some(seat) => Admission::of(seat, set.add(now, member)),
    }
}

/// When the key expires after an admit or refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowExpiry {
    /// Absolute Unix time in milliseconds.
    At(i64),
    /// `window <= 0`: like EXPIRE with a past time, the key goes at once.
    Immediately,
}

/// The expiry does not fit a signed 64-bit Unix time in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpireOverflow;

/// `window` seconds after the server's clock, rounded *up* to the millisecond. Rounding down
/// (`EXPIRE floor(window)`) would drop members still inside a fractional window
/// and let the limiter admit more than `limit`; `floor(0.5)` would even delete every admit.
pub fn expiry(window: f64, now_ms: i64) -> Result<WindowExpiry, ExpireOverflow> {
    if window <= 0.0 {
        return Ok(WindowExpiry::Immediately);
    }
    let ttl_ms = (window * 1000.0).ceil();
    // 2^63 is exactly representable; anything at or above it does not fit an i64.
    if ttl_ms >= 9_223_372_036_854_775_808.0 {
        return Err(ExpireOverflow);
    }
    now_ms
        .checked_add(ttl_ms as i64)
        .map(WindowExpiry::At)
        .ok_or(ExpireOverflow)
}

#[cfg(test)]
mod tests {
    use super::model::ModelWindow;
    use super::*;

    const NOW_MS: i64 = 1_700_000_000_000;

    #[test]
    fn cutoff_is_now_minus_window() {
        assert_eq!(cutoff(1015.0, 10.0), 1005.0);
        assert_eq!(cutoff(5.5, 10.0), -4.5);
    }

    const HOLDER: fn() -> bool = || true;
    const NEWCOMER: fn() -> bool = || false;

    #[test]
    fn a_holder_refreshes_even_in_a_full_window() {
        assert_eq!(decide(1, 1, 1, HOLDER), Verdict::Grant);
        assert_eq!(decide(5, 1, 3, HOLDER), Verdict::Grant);
        assert_eq!(decide(2, 1, 0, HOLDER), Verdict::Grant);
    }

    #[test]
    fn a_newcomer_is_admitted_only_below_the_limit() {
        assert_eq!(decide(2, 1, 3, NEWCOMER), Verdict::Grant);
        assert_eq!(decide(3, 1, 3, NEWCOMER), Verdict::Reject);
        assert_eq!(decide(0, 1, 1, NEWCOMER), Verdict::Grant);
    }

    #[test]
    fn with_room_nobody_asks_who_holds_a_slot() {
        assert_eq!(decide(2, 1, 3, || panic!("looked up")), Verdict::Grant);
    }

    #[test]
    fn a_non_positive_limit_rejects_every_newcomer() {
        assert_eq!(decide(0, 1, 0, NEWCOMER), Verdict::Reject);
        assert_eq!(decide(0, 1, -5, NEWCOMER), Verdict::Reject);
        assert_eq!(decide(0, 1, i64::MIN, NEWCOMER), Verdict::Reject);
    }

    #[test]
    fn several_permits_fit_only_all_together() {
        assert!(fits_permits(1, 2, 3));
        assert!(!fits_permits(2, 2, 3));
        assert!(
            !fits_permits(0, 4, 3),
            "more permits than the limit never fit"
        );
        assert!(!fits_permits(usize::MAX, 1, i64::MAX));
        assert_eq!(decide(1, 2, 3, NEWCOMER), Verdict::Grant);
        assert_eq!(decide(2, 2, 3, NEWCOMER), Verdict::Reject);
        assert_eq!(decide(2, 2, 3, HOLDER), Verdict::Grant);
    }

    #[test]
    fn a_holders_permits_are_its_member_and_numbered_twins() {
        assert_eq!(permit_member(b"w1", 0, None), b"w1");
        assert_eq!(permit_member(b"w1", 1, None), b"w1\x001");
        assert_eq!(permit_member(b"w1", 12, None), b"w1\x0012");
    }

    #[test]
    fn with_a_separator_every_permit_is_numbered_from_0() {
        assert_eq!(permit_member(b"w1", 0, Some(b"_")), b"w1_0");
        assert_eq!(permit_member(b"w1", 1, Some(b"_")), b"w1_1");
        assert_eq!(permit_member(b"w1", 12, Some(b"::")), b"w1::12");
        assert_eq!(permit_member(b"w1", 3, Some(b"")), b"w13");
    }

    #[test]
    fn counting_stops_at_the_limit() {
        assert_eq!(count_cap(3), 3);
        assert_eq!(count_cap(0), 0);
        assert_eq!(count_cap(-7), 0);
        // Counting `limit` members is enough to answer "fewer than limit?".
        assert_eq!(decide(count_cap(3), 1, 3, NEWCOMER), Verdict::Reject);
    }

    #[test]
    fn whole_windows_expire_like_expire_window() {
        assert_eq!(expiry(10.0, NOW_MS), Ok(WindowExpiry::At(NOW_MS + 10_000)));
    }

    #[test]
    fn fractional_windows_round_up_to_the_millisecond() {
        assert_eq!(expiry(0.5, NOW_MS), Ok(WindowExpiry::At(NOW_MS + 500)));
        assert_eq!(expiry(2.5, NOW_MS), Ok(WindowExpiry::At(NOW_MS + 2500)));
        assert_eq!(expiry(0.0001, NOW_MS), Ok(WindowExpiry::At(NOW_MS + 1)));
        assert_eq!(expiry(1.0005, NOW_MS), Ok(WindowExpiry::At(NOW_MS + 1001)));
    }

    #[test]
    fn non_positive_windows_expire_at_once() {
        assert_eq!(expiry(0.0, NOW_MS), Ok(WindowExpiry::Immediately));
        assert_eq!(expiry(-0.0, NOW_MS), Ok(WindowExpiry::Immediately));
        assert_eq!(expiry(-30.0, NOW_MS), Ok(WindowExpiry::Immediately));
    }

    #[test]
    fn windows_past_the_millisecond_clock_are_invalid() {
        for window in [1e300, 9.3e15, f64::MAX] {
            assert_eq!(
                expiry(window, NOW_MS),
                Err(ExpireOverflow),
                "window={window}"
            );
        }
        // Fits in i64 by itself, but not added to the clock.
        assert_eq!(expiry(9.223371e15, NOW_MS), Err(ExpireOverflow));
    }

    #[test]
    fn eviction_removes_everything_at_or_below_the_cutoff() {
        let mut set = ModelWindow::of(&[("a", 1.0), ("b", 5.0), ("c", 6.0)]);
        let eviction = evict(&mut set, 5.0);
        assert_eq!(
            eviction,
            Eviction {
                count: 2,
                through: 5.0,
                complete: true
            }
        );
        assert_eq!(set.members(), [(b"c".to_vec(), 6.0)]);
    }

    #[test]
    fn eviction_stops_at_the_budget_but_takes_every_tie() {
        let mut set = ModelWindow::default();
        for i in 0..EVICTION_BUDGET + 500 {
            // Members 1000 to 1099 share the score 1000.0.
            let score = if (1000..1100).contains(&i) {
                1000.0
            } else {
                i as f64
            };
            set.add(score, format!("m{i}").as_bytes());
        }
        let eviction = evict(&mut set, 1e9);
        assert_eq!(eviction.through, 1000.0);
        assert_eq!(
            eviction.count, 1100,
            "the budget, then every member tied at the last score"
        );
        assert!(!eviction.complete);
        assert_eq!(set.lowest_score(), Some(1100.0));
        let rest = evict(&mut set, 1e9);
        assert_eq!(
            rest,
            Eviction {
                count: EVICTION_BUDGET + 500 - 1100,
                through: 1e9,
                complete: true
            }
        );
    }

    #[test]
    fn exactly_the_budget_is_complete_and_says_through_the_last_score() {
        let mut set = ModelWindow::default();
        for i in 0..EVICTION_BUDGET {
            set.add(i as f64, format!("m{i}").as_bytes());
        }
        set.add(5000.0, b"inside");
        let eviction = evict(&mut set, 2000.0);
        assert_eq!(eviction.count, EVICTION_BUDGET);
        assert_eq!(eviction.through, (EVICTION_BUDGET - 1) as f64);
        assert!(eviction.complete);
    }

    #[test]
    fn a_holder_keeps_its_slot_and_a_newcomer_waits() {
        let mut set = ModelWindow::of(&[("worker-1", 5000.0)]);
        let cutoff = cutoff(5001.0, 30.0);
        let eviction = evict(&mut set, cutoff);
        assert_eq!(
            admit(&mut set, &eviction, cutoff, 1, 5001.0, b"worker-2"),
            Admission::Rejected
        );
        assert_eq!(
            admit(&mut set, &eviction, cutoff, 1, 5020.0, b"worker-1"),
            Admission::Refreshed(Zadded::Moved)
        );
        assert_eq!(set.members(), [(b"worker-1".to_vec(), 5020.0)]);
    }

    #[test]
    fn with_a_backlog_only_members_inside_the_window_count() {
        // 2,000 old members, too many to evict in one call, and one inside the window.
        let mut set = ModelWindow::default();
        for i in 0..2000 {
            set.add(i as f64, format!("old{i}").as_bytes());
        }
        set.add(10_000.0, b"inside");
        let cutoff = 5000.0;
        let eviction = evict(&mut set, cutoff);
        assert!(!eviction.complete);
        // Limit 2: one member inside, so there is room, though the set holds ~977.
        assert_eq!(
            admit(&mut set, &eviction, cutoff, 2, 10_001.0, b"new"),
            Admission::Admitted(Zadded::Added)
        );
        // A member still waiting to be evicted is a newcomer, and the window is now full.
        assert_eq!(
            admit(&mut set, &eviction, cutoff, 2, 10_002.0, b"old1999"),
            Admission::Rejected
        );
        assert_eq!(
            admit(&mut set, &eviction, cutoff, 3, 10_002.0, b"old1999"),
            Admission::Admitted(Zadded::Moved)
        );
    }

    #[test]
    fn a_sliced_eviction_says_through_the_last_score_it_removed() {
        // 2,000 old members at distinct scores: the budget stops at the 1,024th.
        let mut set = ModelWindow::default();
        for i in 0..2000 {
            set.add(i as f64, format!("old{i}").as_bytes());
        }
        let eviction = evict(&mut set, 5000.0);
        assert_eq!(
            eviction,
            Eviction {
                count: EVICTION_BUDGET,
                through: (EVICTION_BUDGET - 1) as f64,
                complete: false
            }
        );
        assert_eq!(set.lowest_score(), Some(EVICTION_BUDGET as f64));
    }

    /// A budget's worth of old members, then `edge` at exactly the cutoff (outside the window,
    /// still to evict) and `inside`: after one call's eviction, only `edge` is left behind.
    fn backlog_with_a_member_at_the_cutoff() -> (ModelWindow, Eviction, f64) {
        let mut set = ModelWindow::default();
        for i in 0..EVICTION_BUDGET {
            set.add(i as f64, format!("old{i}").as_bytes());
        }
        set.add(5000.0, b"edge");
        set.add(10_000.0, b"inside");
        let cutoff = cutoff(10_000.5, 5000.5);
        assert_eq!(cutoff, 5000.0);
        let eviction = evict(&mut set, cutoff);
        (set, eviction, cutoff)
    }

    #[test]
    fn a_member_at_exactly_the_cutoff_is_still_to_evict() {
        let (mut set, eviction, cutoff) = backlog_with_a_member_at_the_cutoff();
        assert_eq!(eviction.count, EVICTION_BUDGET);
        assert!(
            !eviction.complete,
            "edge is at the cutoff: outside the window"
        );
        assert_eq!(
            evict(&mut set, cutoff),
            Eviction {
                count: 1,
                through: cutoff,
                complete: true
            }
        );
        assert_eq!(set.members(), [(b"inside".to_vec(), 10_000.0)]);
    }

    #[test]
    fn a_member_at_exactly_the_cutoff_does_not_count() {
        // The set holds `limit` members, but one of them has left the window: room for one.
        let (mut set, eviction, cutoff) = backlog_with_a_member_at_the_cutoff();
        assert_eq!(set.cardinality(), 2);
        assert_eq!(
            admit(&mut set, &eviction, cutoff, 2, 10_000.5, b"new"),
            Admission::Admitted(Zadded::Added)
        );
    }

    #[test]
    fn a_member_at_exactly_the_cutoff_holds_no_slot() {
        // Limit 1, taken by `inside`: `edge` has left the window, so it is a newcomer.
        let (mut set, eviction, cutoff) = backlog_with_a_member_at_the_cutoff();
        assert_eq!(
            admit(&mut set, &eviction, cutoff, 1, 10_000.5, b"edge"),
            Admission::Rejected
        );
        assert_eq!(set.score(b"edge"), Some(5000.0), "nothing moved");
    }

    #[test]
    fn with_a_backlog_a_holder_still_refreshes() {
        let (mut set, eviction, cutoff) = backlog_with_a_member_at_the_cutoff();
        assert_eq!(
            admit(&mut set, &eviction, cutoff, 1, 10_000.5, b"inside"),
            Admission::Refreshed(Zadded::Moved)
        );
    }

    #[test]
    fn a_call_is_granted_unless_rejected_and_says_what_the_set_did() {
        // GOBLIN.ZWINDOW lock:job7 5000 30 1 worker-1 -> 1, then worker-2 -> 0, then worker-1
        // renews at the same instant: granted, and the set did not change.
        let mut set = ModelWindow::of(&[("worker-1", 5000.0)]);
        let cutoff = cutoff(5000.0, 30.0);
        let eviction = evict(&mut set, cutoff);
        let rejected = admit(&mut set, &eviction, cutoff, 1, 5000.0, b"worker-2");
        assert!(!rejected.granted());
        assert_eq!(rejected.zadded(), None);
        let renewed = admit(&mut set, &eviction, cutoff, 1, 5000.0, b"worker-1");
        assert_eq!(renewed, Admission::Refreshed(Zadded::Unchanged));
        assert!(renewed.granted());
        assert_eq!(renewed.zadded(), Some(Zadded::Unchanged));
        let admitted = admit(&mut set, &eviction, cutoff, 2, 5001.0, b"worker-2");
        assert!(admitted.granted());
        assert_eq!(admitted.zadded(), Some(Zadded::Added));
    }

    /// The model, except that counting the members inside the window is an error: the set's
    /// length must settle the decision.
    struct CountingForbidden(ModelWindow);

    impl SortedWindow for CountingForbidden {
        type Member = [u8];

        fn lowest_score(&self) -> Option<f64> {
            self.0.lowest_score()
        }
        fn cardinality(&self) -> usize {
            self.0.cardinality()
        }
        fn count_above(&self, _: f64, _: usize) -> usize {
            panic!("counted the members inside the window")
        }
        fn score(&self, member: &[u8]) -> Option<f64> {
            self.0.score(member)
        }
        fn first_above<R>(&self, cutoff: f64, read: impl FnOnce(&[u8], f64) -> R) -> Option<R> {
            self.0.first_above(cutoff, read)
        }
        fn last<R>(&self, read: impl FnOnce(&[u8], f64) -> R) -> Option<R> {
            self.0.last(read)
        }
    }

    impl SortedWindowMut for CountingForbidden {
        fn remove_lowest(&mut self, upper: f64, max: usize) -> (usize, f64) {
            self.0.remove_lowest(upper, max)
        }
        fn add(&mut self, score: f64, member: &[u8]) -> Zadded {
            self.0.add(score, member)
        }
        fn add_bytes(&mut self, score: f64, member: &[u8]) -> Zadded {
            self.0.add(score, member)
        }
    }

    #[test]
    fn after_a_complete_eviction_nothing_is_counted() {
        // GOBLIN.ZWINDOW rl:user42 1003 10 3 req-d -> 0: the set's length says "full".
        let mut set = CountingForbidden(ModelWindow::of(&[
            ("req-a", 1000.0),
            ("req-b", 1001.0),
            ("req-c", 1002.0),
        ]));
        let cutoff = cutoff(1003.0, 10.0);
        let eviction = evict(&mut set, cutoff);
        assert!(eviction.complete);
        assert_eq!(
            admit(&mut set, &eviction, cutoff, 3, 1003.0, b"req-d"),
            Admission::Rejected
        );
    }

    #[test]
    fn with_a_backlog_below_the_limit_nothing_is_counted() {
        let (set, eviction, cutoff) = backlog_with_a_member_at_the_cutoff();
        let mut set = CountingForbidden(set);
        assert!(!eviction.complete);
        assert_eq!(
            admit(&mut set, &eviction, cutoff, 3, 10_000.5, b"new"),
            Admission::Admitted(Zadded::Added)
        );
    }

    /// A grant whose seat recording tells is seated as one asked first: over random windows,
    /// members, limits and cutoffs, with complete and sliced evictions.
    #[test]
    fn a_seat_told_by_recording_is_the_seat_asked_first() {
        let mut bits = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |below: u64| {
            bits ^= bits << 13;
            bits ^= bits >> 7;
            bits ^= bits << 17;
            bits % below
        };
        for _ in 0..20_000 {
            let members: Vec<(String, f64)> = (0..next(12))
                .map(|i| (format!("m{i}"), next(40) as f64))
                .collect();
            let named: Vec<(&str, f64)> = members.iter().map(|(m, s)| (m.as_str(), *s)).collect();
            let member = format!("m{}", next(16));
            let (cutoff, limit, now) = (next(30) as f64, next(14) as i64, 40.0 + next(5) as f64);
            let mut asked = ModelWindow::of(&named);
            let mut told = ModelWindow::of(&named);
            let eviction = if next(2) == 0 {
                evict(&mut asked, cutoff)
            } else {
                // A sliced eviction: some of what left the window stays for now.
                let (count, through) = asked.remove_lowest(cutoff / 2.0, usize::MAX);
                let _ = through;
                Eviction {
                    count,
                    through: cutoff / 2.0,
                    complete: asked.lowest_score().is_none_or(|lowest| lowest > cutoff),
                }
            };
            let _ = told.remove_lowest(eviction.through, usize::MAX);
            let first = seat(&asked, &eviction, cutoff, limit, member.as_bytes(), 1);
            let second = seating(&told, &eviction, cutoff, limit, member.as_bytes(), 1, false);
            assert_eq!(
                first.is_some(),
                second.is_some(),
                "{members:?} {member} {cutoff}"
            );
            if let (Some(seat), Some(seating)) = (first, second) {
                let zadded = told.add(now, member.as_bytes());
                assert_eq!(seating.after(zadded), seat, "{members:?} {member} {cutoff}");
            }
        }
    }
}
