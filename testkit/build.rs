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
         pub const REFERENCES: &[(&str, &str, &str, &str)] = &[\n{references}];\n"
    );
    std::fs::write(out, code).expect("write servers.rs");
}

/// `redis810` becomes `Redis810`, `valkey91` `Valkey91`.
fn variant_of(name: &str) -> String {
    let mut chars = name.chars();
    let first = chars.next().expect("a name").to_ascii_uppercase();
    std::iter::once(first).chain(chars).collect()
}
