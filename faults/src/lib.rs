#![forbid(unsafe_code)]
pub mod campaign;
pub mod checks;
pub mod history;
pub mod limits;
pub mod locks;
pub mod nemesis;
pub mod net;
pub mod observer;
pub mod procs;
pub mod report;
pub mod rng;
pub mod shared;
pub mod topology;
pub mod wire;
pub mod worker;
