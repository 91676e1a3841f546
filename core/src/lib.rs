//! The pure engine of Goblin: what a counter and its TTL become, ZWINDOW's whole algorithm over
//! a small sorted-set trait, when a key expires, and the exact decimal text of replicated
//! numbers. No server here, and nothing of the wire (command names, error texts, reply codes):
//! all of it is unit-tested and fuzzed without a server; the module crate adapts it.

pub mod counter;
pub mod decimal;
pub mod delex;
pub mod gcra;
pub mod increx;
pub mod model;
pub mod window;
