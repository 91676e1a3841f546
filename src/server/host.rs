//! Which server Goblin runs in, read once at load from `INFO server`, for the few places where
//! the servers' own commands behave differently and Goblin follows each.

use std::sync::OnceLock;

use redis_module::raw;

use super::probe::info_fields;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Redis,
    Valkey,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Host {
    pub family: Family,
    /// (major, minor, patch) of the server's own version (`valkey_version` on Valkey, whose
    /// `redis_version` is a fixed compatibility number).
    pub version: (u32, u32, u32),
}

static HOST: OnceLock<Host> = OnceLock::new();

/// The server Goblin was loaded into.
pub fn host() -> Host {
    HOST.get().copied().unwrap_or(Host {
        family: Family::Redis,
        version: (0, 0, 0),
    })
}

impl Host {
    /// EXPIRE with a time in the past deletes the key and fires `expired` on Valkey 8.1 and
    /// later (valkey-io/valkey#1517), `del` on Redis and older Valkey.
    pub fn expire_in_the_past_fires_expired(self) -> bool {
        self.family == Family::Valkey && self.version >= (8, 1, 0)
    }

    /// `RedisModule_SignalModifiedKey` looks the key up again (to note when it was last
    /// modified: about 400 instructions a write) on Redis 8.10, not on Redis 8.2 nor Valkey 9.1;
    /// from Redis 8.4, the first release that may, a written key is signalled as it is closed
    /// instead (`Key::signal_modified`). Either way the key is signalled: only the cost differs.
    pub fn signal_looks_the_key_up(self) -> bool {
        self.family == Family::Redis && self.version >= (8, 4, 0)
    }
}

fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.trim().split('.').map(|part| part.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

/// Reads `INFO server` (load time only).
pub(super) fn detect(ctx: *mut raw::RedisModuleCtx) {
    let Some(fields) = info_fields(ctx, c"server", &[c"valkey_version", c"redis_version"]) else {
        return;
    };
    let host = match (&fields[0], &fields[1]) {
        (Some(valkey), _) => parse_version(valkey).map(|version| Host {
            family: Family::Valkey,
            version,
        }),
        (None, Some(redis)) => parse_version(redis).map(|version| Host {
            family: Family::Redis,
            version,
        }),
        (None, None) => None,
    };
    if let Some(host) = host {
        let _ = HOST.set(host);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_as_the_servers_print_them() {
        assert_eq!(parse_version("7.0.15"), Some((7, 0, 15)));
        assert_eq!(parse_version("8.10.2"), Some((8, 10, 2)));
        assert_eq!(parse_version("9.1"), Some((9, 1, 0)));
        assert_eq!(parse_version("x"), None);
    }

    #[test]
    fn only_valkey_8_1_and_later_fire_expired() {
        let valkey = |version| Host {
            family: Family::Valkey,
            version,
        };
        let redis = |version| Host {
            family: Family::Redis,
            version,
        };
        assert!(valkey((9, 1, 2)).expire_in_the_past_fires_expired());
        assert!(valkey((8, 1, 0)).expire_in_the_past_fires_expired());
        assert!(!valkey((8, 0, 1)).expire_in_the_past_fires_expired());
        assert!(!redis((8, 10, 2)).expire_in_the_past_fires_expired());
    }
}
