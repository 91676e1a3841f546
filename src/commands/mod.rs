//! One file per command, each in the shape of `crate::server::command::Command`: its spec, its
//! arguments, its parser and `run`. Goblin's own commands are here, named after the command
//! (`zwindow.rs` is GOBLIN.ZWINDOW); the stand-ins for native commands of newer servers are in
//! `native/`. A family of several commands that share their grants has a folder of its own
//! (`rwlock/`: the readers-writer lock).

pub mod block;
pub mod bzwindow;
pub mod cad;
pub mod extend;
pub mod fwindow;
pub mod fwstats;
pub mod gcra;
pub mod increx;
pub mod lock;
pub mod mfwindow;
pub mod mgcra;
pub mod native;
pub mod rwlock;
pub mod swindow;
pub mod swstats;
pub mod zwindow;
pub mod zwstats;

use std::collections::HashMap;

use smallvec::SmallVec;

use crate::server::Arg;

/// As many keys as a multi-key call usually names, kept on the stack.
pub(crate) const INLINE: usize = 4;

/// The distinct keys of a command that names several (GOBLIN.MGCRA, GOBLIN.MFWINDOW), and where
/// each of its groups' key is among them, added when it is new. Linear for the few a call
/// usually names, a map beyond.
pub(crate) struct KeyIndex<'call> {
    pub(crate) keys: SmallVec<[Arg<'call>; INLINE]>,
    map: Option<HashMap<&'call [u8], usize>>,
}

impl<'call> KeyIndex<'call> {
    const LINEAR: usize = 8;

    pub(crate) fn new(policies: usize) -> Self {
        KeyIndex {
            keys: SmallVec::with_capacity(policies),
            map: (policies > Self::LINEAR).then(HashMap::new),
        }
    }

    pub(crate) fn index(&mut self, key: Arg<'call>) -> usize {
        let next = self.keys.len();
        let found = match &mut self.map {
            Some(map) => *map.entry(key.as_bytes()).or_insert(next),
            None => self
                .keys
                .iter()
                .position(|known| known.as_bytes() == key.as_bytes())
                .unwrap_or(next),
        };
        if found == next {
            self.keys.push(key);
        }
        found
    }
}
