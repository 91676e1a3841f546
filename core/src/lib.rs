//! The pure engine of Goblin: what a counter and its TTL become, where a window starts, who gets
//! a slot, when a key expires, and the exact decimal text of replicated numbers. No server
//! here, so all of it is unit-tested and fuzzed without one; the module crate only adapts it
//! to the server.

pub mod counter;
pub mod decimal;
pub mod error;
pub mod window;
