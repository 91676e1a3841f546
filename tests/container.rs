//! The container image, without a Docker engine: the test reads docker/Dockerfile, takes the
//! config file and the command line the image runs, rewrites only the paths that exist inside
//! the image, and starts the real Valkey 9.1 binary with them. If the Dockerfile, the config or
//! the module drift apart, this fails. `make image-test` (scripts/image-test.sh) builds the
//! Dockerfile for real and runs the image; this test is the quick check `make test` runs.

mod common;
use common::*;
use std::path::Path;

fn repo_file(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The sources of the build stage's `COPY` lines (the first stage's), in order.
fn copied_sources(dockerfile: &str) -> Vec<String> {
    dockerfile
        .lines()
        .skip_while(|l| !l.starts_with("FROM "))
        .skip(1)
        .take_while(|l| !l.starts_with("FROM "))
        .filter(|l| l.starts_with("COPY "))
        .flat_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words[1..words.len() - 1]
                .iter()
                .map(|w| w.trim_end_matches('/').to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The image of the `FROM` line `n` (0: the build stage), and its tag split at the first `-`:
/// `rust:1.95.0-trixie` is (`rust`, `1.95.0`, `trixie`).
fn base_image(dockerfile: &str, n: usize) -> (String, String, String) {
    let image = dockerfile
        .lines()
        .filter(|l| l.starts_with("FROM "))
        .nth(n)
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_else(|| panic!("no FROM line {n}"))
        .to_string();
    let (name, tag) = image
        .split_once(':')
        .unwrap_or_else(|| panic!("{image} has no tag"));
    let (version, suite) = tag
        .split_once('-')
        .unwrap_or_else(|| panic!("{image}: the tag names no Debian release"));
    (name.to_string(), version.to_string(), suite.to_string())
}

/// The destination of the `COPY` line whose source ends with `source`.
fn copy_destination(dockerfile: &str, source: &str) -> String {
    dockerfile
        .lines()
        .filter(|l| l.starts_with("COPY"))
        .find_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            (words.len() >= 3 && words[words.len() - 2].ends_with(source))
                .then(|| words[words.len() - 1].to_string())
        })
        .unwrap_or_else(|| panic!("no COPY of {source} in the Dockerfile"))
}

#[test]
fn the_image_config_loads_goblin_on_valkey_9() {
    let dockerfile = repo_file("docker/Dockerfile");
    // Both stages pinned to a release, on the same Debian release: the official Valkey 9.x
    // images are built on Debian trixie, and the module must link against the glibc it runs
    // on.
    let (build, rust, build_suite) = base_image(&dockerfile, 0);
    let (runtime, valkey, runtime_suite) = base_image(&dockerfile, 1);
    assert_eq!(build, "rust", "the build stage");
    assert_eq!(runtime, "valkey/valkey", "the runtime stage");
    let pinned =
        |v: &str| v.split('.').count() == 3 && v.split('.').all(|p| p.parse::<u32>().is_ok());
    assert!(
        pinned(&rust),
        "the Rust image must be a pinned x.y.z tag, not {rust}"
    );
    assert!(
        valkey.starts_with("9.") && pinned(&valkey),
        "the runtime image must be a pinned Valkey 9.x.y tag, not {valkey}"
    );
    assert_eq!(
        build_suite, "trixie",
        "the official Valkey 9 images are built on trixie"
    );
    assert_eq!(
        runtime_suite, build_suite,
        "both stages on one Debian release"
    );

    // The build stage copies everything `cargo build -p goblin` reads: the manifest and lock
    // file, the build script (which compiles the C shim: without it the module does not load),
    // the module's source, and every workspace member, or cargo cannot even read the
    // workspace.
    let copied = copied_sources(&dockerfile);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut needed = vec!["Cargo.toml".to_string(), "Cargo.lock".into(), "src".into()];
    if root.join("build.rs").exists() {
        needed.push("build.rs".into());
    }
    let manifest = repo_file("Cargo.toml");
    let members = manifest
        .lines()
        .find_map(|l| l.strip_prefix("members = "))
        .expect("a workspace members line");
    for member in members.trim_matches(|c| c == '[' || c == ']').split(',') {
        needed.push(member.trim().trim_matches('"').to_string());
    }
    for path in &needed {
        assert!(
            copied.contains(path),
            "the Dockerfile's build stage does not copy {path} (it copies {copied:?})"
        );
    }
    let module_in_image = copy_destination(&dockerfile, "libgoblin.so");
    let config_in_image = copy_destination(&dockerfile, "goblin.conf");
    let cmd = dockerfile
        .lines()
        .find_map(|l| l.strip_prefix("CMD "))
        .expect("a CMD line");
    assert_eq!(
        cmd,
        format!(r#"["valkey-server", "{config_in_image}"]"#),
        "the image's command line"
    );

    // The config as the image has it, with only the in-image paths rewritten.
    let config = repo_file("docker/goblin.conf");
    let loads: Vec<&str> = config
        .lines()
        .filter(|l| l.starts_with("loadmodule "))
        .collect();
    assert_eq!(
        loads,
        [format!("loadmodule {module_in_image}")],
        "the config loads the module the image copies"
    );
    let dir = TempDir::new("container");
    let rewritten = config
        .replace(&module_in_image, module_path().to_str().unwrap())
        .replace("dir /data", &format!("dir {}", dir.0.display()));
    let config_path = dir.0.join("goblin.conf");
    std::fs::write(&config_path, rewritten).unwrap();

    // `valkey-server /usr/local/etc/valkey/goblin.conf`, on a free loopback port.
    let server = Server::builder(Flavor::Valkey91)
        .without_module()
        .dir(&dir.0)
        .config_file(&config_path)
        .start();
    let mut c = server.conn();
    let modules = c.call(&["MODULE", "LIST"]);
    assert!(
        modules
            .array()
            .iter()
            .any(|m| m.array()[1].text() == "goblin"),
        "{modules:?}"
    );
    assert_eq!(
        c.call(&["CONFIG", "GET", "appendonly"]).texts(),
        ["appendonly", "yes"]
    );
    assert_eq!(
        zwindow(&mut c, "lock:job7", "5000", "30", "1", "worker-1"),
        Reply::Int(1)
    );
    assert_eq!(
        zwindow(&mut c, "lock:job7", "5001", "30", "1", "worker-2"),
        Reply::Int(0)
    );
    assert_eq!(cad(&mut c, "lock:job7", "worker-1"), Reply::Int(1));
    assert_eq!(increx(&mut c, "rate:user42", "60"), Reply::Int(1));
    assert_eq!(c.call(&["TTL", "rate:user42"]), Reply::Int(60));
}
