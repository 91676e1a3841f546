//! The pure engine of Goblin: one module per command, named after it, with the decisions it
//! makes (what a counter and its TTL become, ZWINDOW's whole algorithm over a small sorted-set
//! trait, GCRA's arithmetic over a TAT store), the native stand-ins' decisions under `native/`,
//! and what the servers share: their decimal text, and how they match option names. No server here, and nothing of the wire (command names, error
//! texts, reply codes): all of it is unit-tested and fuzzed without a server; the module crate
//! adapts it.
#![forbid(unsafe_code)]

pub mod clock;
pub mod decimal;
pub mod fence;
pub mod fwindow;
pub mod gcra;
pub mod grant;
pub mod increx;
pub mod mgcra;
pub mod native;
#[cfg(feature = "planted-defects")]
pub mod planted;
pub mod rwlock;
pub mod swindow;
pub mod waitlist;
pub mod word;
pub mod zwindow;
