//! The stand-ins' decisions: the native commands of newer servers (INCREX, DELEX, DIGEST), and
//! redis-cell's CL.THROTTLE, whose contracts are theirs. Goblin's own commands are the modules
//! above.

pub mod cl_throttle;
pub mod delex;
pub mod digest;
pub mod increx;
