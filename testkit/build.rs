//! Reads the one server list, `scripts/servers.list`, and writes the `servers!` invocation that
//! `src/servers.rs` includes: the `Flavor` enum and `on_every_server!` follow the list, so a
//! server added there is in every test.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/servers.list");
    println!("cargo:rerun-if-changed={}", list.display());
    let text = std::fs::read_to_string(&list).expect("scripts/servers.list");
    let mut matrix = String::new();
    let mut references = String::new();
    // Each capability some tests need, and for each server of the matrix whether it has it.
    let mut capable: Vec<(&str, Vec<(String, bool)>)> = CAPABILITIES
        .iter()
        .map(|(capability, _)| (*capability, Vec::new()))
        .collect();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('|').map(str::trim).collect();
        let [name, label, family, version, role, binary, _install] = fields[..] else {
            panic!("scripts/servers.list:{}: expected 7 fields", number + 1);
        };
        let (major, minor) = version
            .split_once('.')
            .unwrap_or_else(|| panic!("scripts/servers.list:{}: version {version:?}", number + 1));
        let env = format!("GOBLIN_{}", name.to_uppercase());
        match role {
            "matrix" => {
                let variant = variant_of(name);
                let number = |text: &str| text.parse::<u32>().expect("a version number");
                let version = (number(major), number(minor));
                for ((_, has), (_, flavors)) in CAPABILITIES.iter().zip(capable.iter_mut()) {
                    flavors.push((variant.clone(), has(family, version)));
                }
                writeln!(
                    matrix,
                    "    /// {label}, from `scripts/servers.list`.\n    {variant} {{ name: {name}, \
                     label: {label:?}, family: {family}, version: ({major}, {minor}), env: \
                     {env:?}, path: {binary:?} }},"
                )
                .unwrap();
            }
            "reference" => {
                writeln!(
                    references,
                    "    ({name:?}, {label:?}, {env:?}, {binary:?}),"
                )
                .unwrap();
            }
            other => panic!("scripts/servers.list:{}: role {other:?}", number + 1),
        }
    }
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("servers.rs");
    let code = format!(
        "servers! {{$\n{matrix}}}\n\n/// The reference builds: (name, label, environment variable, default path).\n\
         pub const REFERENCES: &[(&str, &str, &str, &str)] = &[\n{references}];\n\n{}",
        on_servers_with(&capable)
    );
    std::fs::write(out, code).expect("write servers.rs");
}

/// The capabilities some tests need, each a server's by its family and version, as
/// `Flavor::has` says too (a test on every server holds both to the running server,
/// `tests/harness.rs`).
type Has = fn(&str, (u32, u32)) -> bool;
const CAPABILITIES: &[(&str, Has)] = &[
    // EXPIRE and the module's cached clock from one command-time snapshot: Redis 7.2+, Valkey.
    ("snapshot", |family, version| {
        family == "Valkey" || version >= (7, 2)
    }),
    // CLUSTER MIGRATESLOTS: Valkey 9.
    ("atomic_slot_migration", |family, version| {
        family == "Valkey" && version >= (9, 0)
    }),
];

/// `on_servers_with!(capability, "why not elsewhere", fn ...)`: one test per server of the
/// matrix, as `on_every_server!` makes, the body run on the servers with the capability; on the
/// others the test is ignored (cargo test says so: a skip, never a pass), and when run with
/// `--ignored` it proves the server lacks the capability.
fn on_servers_with(capable: &[(&str, Vec<(String, bool)>)]) -> String {
    let mut arms = String::new();
    for (capability, flavors) in capable {
        let mut tests = String::new();
        for (variant, has) in flavors {
            let name = variant.to_lowercase();
            if *has {
                writeln!(
                    tests,
                    "#[test] fn {name}() {{ run($crate::Flavor::{variant}) }}"
                )
                .unwrap();
            } else {
                writeln!(
                    tests,
                    "#[test] #[ignore = $why] fn {name}() {{ \
                     $crate::assert_lacks($crate::Flavor::{variant}, $crate::Capability::from_name({capability:?})) }}"
                )
                .unwrap();
            }
        }
        writeln!(
            arms,
            "({capability}, $why:literal, $($(#[$meta:meta])* fn $test:ident($flavor:ident: Flavor) $body:block)+) => {{\n\
             $($(#[$meta])* mod $test {{\n#[allow(unused_imports)] use super::*;\n\
             #[allow(dead_code)] fn run($flavor: $crate::Flavor) $body\n{tests}}})+\n}};"
        )
        .unwrap();
    }
    let mut table = String::new();
    for (capability, flavors) in capable {
        for (variant, _) in flavors.iter().filter(|(_, has)| *has) {
            writeln!(table, "    ({capability:?}, {:?}),", variant.to_lowercase()).unwrap();
        }
    }
    format!(
        "/// (capability, server) for every server of the matrix with it.\n\
         const CAPABLE: &[(&str, &str)] = &[\n{table}];\n\n\
         #[macro_export]\nmacro_rules! on_servers_with {{\n{arms}}}\n"
    )
}

/// `redis810` becomes `Redis810`, `valkey91` `Valkey91`.
fn variant_of(name: &str) -> String {
    let mut chars = name.chars();
    let first = chars.next().expect("a name").to_ascii_uppercase();
    std::iter::once(first).chain(chars).collect()
}
