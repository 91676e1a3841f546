//! Builds the small C shim that does INCREX BYFLOAT's long double arithmetic (see
//! `src/server/long_double.c`).

fn main() {
    println!("cargo:rerun-if-changed=src/server/long_double.c");
    cc::Build::new()
        .file("src/server/long_double.c")
        .warnings(true)
        .extra_warnings(true)
        .compile("goblin_long_double");
}
