//! One file per command, each in the shape of `crate::server::command::Command`: its spec, its
//! arguments, its parser and `run`. `goblin_*.rs` are Goblin's own commands; the others are
//! stand-ins for native commands of newer servers (`../shared/NATIVE.md`), registered only
//! where the server lacks them.

pub mod delex;
pub mod delifeq;
pub mod digest;
pub mod goblin_cad;
pub mod goblin_gcra;
pub mod goblin_increx;
pub mod goblin_zwindow;
pub mod increx;
