//! One file per command, each in the shape of `crate::server::command::Command`: its spec, its
//! arguments, its parser and `run`. Goblin's own commands are here, named after the command
//! (`zwindow.rs` is GOBLIN.ZWINDOW); the stand-ins for native commands of newer servers are in
//! `native/`.

pub mod block;
pub mod bzwindow;
pub mod cad;
pub mod extend;
pub mod gcra;
pub mod increx;
pub mod lock;
pub mod mgcra;
pub mod native;
pub mod swindow;
pub mod swstats;
pub mod zwindow;
pub mod zwstats;
