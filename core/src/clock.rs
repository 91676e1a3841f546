//! `now` as the commands that take a time accept it: the caller's time, or `*`, the server's
//! clock. One meaning of `*` for every command: seconds with millisecond precision, from the
//! command-time snapshot the server's own expiries count from.

/// Where a call's `now` comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Now {
    /// The caller's time, in its unit (a finite double).
    Caller(f64),
    /// `*`: the server's clock, in seconds.
    Server,
}

impl Now {
    /// The time the call runs at, given the server's clock in milliseconds.
    pub fn resolve(self, now_ms: i64) -> f64 {
        match self {
            Now::Caller(now) => now,
            Now::Server => seconds_of(now_ms),
        }
    }
}

/// The server's clock as a `now` in seconds, with millisecond precision: one correctly rounded
/// division of the whole milliseconds, so a script computing `(ms) / 1000` gets the same double.
pub fn seconds_of(now_ms: i64) -> f64 {
    now_ms as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_clock_in_seconds() {
        assert_eq!(seconds_of(1_796_027_275_379), 1_796_027_275.379);
        assert_eq!(seconds_of(0), 0.0);
        assert_eq!(Now::Server.resolve(1_796_027_275_379), 1_796_027_275.379);
    }

    #[test]
    fn a_callers_time_is_its_own() {
        assert_eq!(Now::Caller(5000.5).resolve(1_796_027_275_379), 5000.5);
    }
}
