//! The servers Goblin is tested and measured on, from the one list, `scripts/servers.list`
//! (which `scripts/servers.sh` installs from too): the `Flavor` enum, where each binary is, and
//! `on_every_server!`, which turns one test body into one test per server of the matrix.
//! `make run SERVER=<name>` asks this (the `server-path` binary) where the binary is.

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

// The list itself: `scripts/servers.list`, read by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/servers.rs"));

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
        self.has(crate::Capability::Snapshot)
    }

    /// Whether this server has `capability`, by the table of `testkit/build.rs` (held to the
    /// running servers by `tests/harness.rs`).
    pub fn has(self, capability: crate::Capability) -> bool {
        CAPABLE
            .iter()
            .any(|(name, flavor)| *name == capability.name() && *flavor == self.name())
    }
}

/// Where the reference build called `name` in `scripts/servers.list` is.
pub fn reference_binary(name: &str) -> PathBuf {
    let (_, label, env, default) = REFERENCES
        .iter()
        .copied()
        .find(|reference| reference.0 == name)
        .unwrap_or_else(|| panic!("no reference build {name:?} in scripts/servers.list"));
    let path = std::env::var_os(env)
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::repo_root().join(default));
    assert!(
        path.exists(),
        "{label}: no server at {} (set {env}, or run `make test`, which runs scripts/servers.sh)",
        path.display()
    );
    path
}

/// Redis 8.10.2 with the GCRA command its source carries compiled back in (Redis wrote it for
/// 8.8 and held it back before 8.8 shipped; no release has it): the
/// reference for GOBLIN.GCRA. Run it as `Flavor::Redis810`.
pub fn redis810_with_gcra() -> PathBuf {
    reference_binary("redis810gcra")
}
