//! Builds the small C shim for the numbers Rust cannot do as the server does: INCREX BYFLOAT's
//! long double arithmetic, and Redis's double parser (see `src/server/numbers.c`).

fn main() {
    println!("cargo:rerun-if-changed=src/server/numbers.c");
    cc::Build::new()
        .file("src/server/numbers.c")
        .warnings(true)
        .extra_warnings(true)
        .compile("goblin_numbers");
}
