//! Defects planted on purpose, so that the fault campaign (`faults/`) can prove it catches
//! them: compiled only with the test-only feature `planted-defects` (the module's test build,
//! never the module users load), and each switched on by the server's environment,
//! `GOBLIN_PLANTED_DEFECT=<name>`. Each is one line where the real code is.

/// A defect the test build can plant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Defect {
    /// The line serves its waiters last come, first served.
    LastComeFirst,
    /// GOBLIN.EXTEND extends the lease whoever holds it.
    ExtendIgnoresOwner,
    /// GOBLIN.MFWINDOW admits one more than each window's limit.
    WindowAdmitsOneMore,
    /// A waiter that times out takes the next waiter of its kind out of the line with it: that
    /// one is never served, and is answered only at its own timeout.
    ForgetsWaiterOnTimeout,
}

impl Defect {
    pub const ALL: [Defect; 4] = [
        Defect::LastComeFirst,
        Defect::ExtendIgnoresOwner,
        Defect::WindowAdmitsOneMore,
        Defect::ForgetsWaiterOnTimeout,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Defect::LastComeFirst => "last-come-first",
            Defect::ExtendIgnoresOwner => "extend-ignores-owner",
            Defect::WindowAdmitsOneMore => "window-admits-one-more",
            Defect::ForgetsWaiterOnTimeout => "forgets-waiter-on-timeout",
        }
    }
}

/// Whether `defect` is planted in this process.
pub fn planted(defect: Defect) -> bool {
    std::env::var("GOBLIN_PLANTED_DEFECT").is_ok_and(|name| name == defect.name())
}
