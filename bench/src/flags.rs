//! The harness's command line, read alike by `make bench`'s programs: `--smoke`, `--servers
//! a,b` (every server of scripts/servers.list by default), and any other `--flag value`.

use goblin_testkit::Flavor;

pub struct Flags(Vec<String>);

impl Flags {
    /// This process's arguments.
    pub fn from_env() -> Flags {
        Flags(std::env::args().skip(1).collect())
    }

    /// Whether `flag` was given.
    pub fn has(&self, flag: &str) -> bool {
        self.0.iter().any(|a| a == flag)
    }

    /// The value given after `flag`.
    pub fn value(&self, flag: &str) -> Option<String> {
        self.0
            .iter()
            .position(|a| a == flag)
            .and_then(|i| self.0.get(i + 1))
            .cloned()
    }

    /// The servers of `--servers a,b`, by their names in scripts/servers.list; all of them
    /// without it.
    pub fn flavors(&self) -> Vec<Flavor> {
        match self.value("--servers") {
            Some(list) => list
                .split(',')
                .map(|name| {
                    Flavor::from_name(name).unwrap_or_else(|| panic!("unknown server {name}"))
                })
                .collect(),
            None => Flavor::ALL.to_vec(),
        }
    }
}
