//! The stand-ins: native commands of newer servers, and redis-cell's CL.THROTTLE, for the
//! servers that lack them, each registered only where the server has no command of its name
//! (`docs/native.md`). Each does what every stand-in does, in the shape
//! `server::command::Command` gives all commands: parse the native grammar, read the key,
//! decide in `goblin_core::native`, apply and replicate the effects through `effects.rs`, reply
//! in the native types.

pub mod cl_throttle;
pub mod delex;
pub mod delifeq;
pub mod digest;
pub mod increx;
