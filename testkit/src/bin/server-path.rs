//! `server-path NAME`: prints where the server of the test matrix called NAME is, so that
//! `make run SERVER=NAME` starts the same binary the tests use.

use goblin_testkit::Flavor;

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    let Some(flavor) = Flavor::from_name(&name) else {
        let names: Vec<&str> = Flavor::ALL.iter().map(|f| f.name()).collect();
        eprintln!("unknown server {name:?}; one of: {}", names.join(", "));
        std::process::exit(2);
    };
    println!("{}", flavor.binary().display());
}
