//! `server-path NAME`: prints where the server of the test matrix called NAME is, so that
//! `make run SERVER=NAME` starts the same binary the tests use; `redis810-gcra` is the
//! reference build of Redis 8.10 with the GCRA its source carries (written for 8.8, in no
//! release) compiled back in.

use goblin_testkit::{redis810_with_gcra, Flavor};

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    if name == "redis810-gcra" {
        println!("{}", redis810_with_gcra().display());
        return;
    }
    let Some(flavor) = Flavor::from_name(&name) else {
        let names: Vec<&str> = Flavor::ALL.iter().map(|f| f.name()).collect();
        eprintln!("unknown server {name:?}; one of: {}", names.join(", "));
        std::process::exit(2);
    };
    println!("{}", flavor.binary().display());
}
