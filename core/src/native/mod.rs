//! The stand-ins' decisions: the native commands of newer servers (INCREX, DELEX, DIGEST),
//! whose contracts are the servers' own. Goblin's own commands are the modules above.

pub mod delex;
pub mod digest;
pub mod increx;
