//! The container image, without a Docker engine: the test reads docker/Dockerfile, takes the
//! config file and the command line the image runs, rewrites only the paths that exist inside
//! the image, and starts the real Valkey 9.1 binary with them. If the Dockerfile, the config or
//! the module drift apart, this fails.

mod common;
use common::*;
use std::path::Path;

fn repo_file(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
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
    let runtime = dockerfile
        .lines()
        .rfind(|l| l.starts_with("FROM"))
        .expect("a FROM line");
    let image = runtime.split_whitespace().nth(1).expect("an image");
    assert!(
        image.starts_with("valkey/valkey:9.") && image.chars().filter(|c| *c == '.').count() >= 2,
        "the runtime image must be a pinned Valkey 9.x tag, not {image}"
    );
    // The build stage copies every workspace member, or cargo cannot even read the workspace.
    let manifest = repo_file("Cargo.toml");
    let members = manifest
        .lines()
        .find_map(|l| l.strip_prefix("members = "))
        .expect("a workspace members line");
    for member in members.trim_matches(|c| c == '[' || c == ']').split(',') {
        let member = member.trim().trim_matches('"');
        assert!(
            dockerfile
                .lines()
                .any(|l| l.starts_with(&format!("COPY {member} "))),
            "the Dockerfile does not copy workspace member {member}"
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
