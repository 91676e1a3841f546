//! One file per command, each in the shape of `crate::command::Command`: its spec, its
//! arguments, its parser and `run`.

pub mod cad;
pub mod increx;
pub mod zwindow;
