//! goblin-redis (node/) as a user installs it: its version is Goblin's (package.json, the one the
//! code reads, and Cargo.toml's agree); `npm pack` gives a tarball of dist/ alone that installs
//! into a new project with no network and imports both ways, `require` and `import`, each entry
//! point, and works against a server; and `npm install ./node` from a fresh clone builds it (its
//! `prepare`).

use goblin_testkit::*;
use std::path::Path;
use std::process::Command;

#[path = "node_support.rs"]
mod node;

/// The first quoted text after `start` on the line that begins with it (after indentation).
fn version_in(text: &str, start: &str) -> String {
    let rest = text
        .lines()
        .find_map(|line| line.trim_start().strip_prefix(start))
        .unwrap_or_else(|| panic!("no line starting {start:?}"));
    let quote = rest.find(['"', '\'']).expect("a quoted version");
    let quoted = &rest[quote + 1..];
    quoted[..quoted.find(['"', '\'']).expect("the closing quote")].to_string()
}

#[test]
fn the_package_version_is_the_modules() {
    let root = repo_root();
    let cargo = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let package =
        std::fs::read_to_string(root.join("node/package.json")).expect("node/package.json");
    let code =
        std::fs::read_to_string(root.join("node/src/version.ts")).expect("node/src/version.ts");
    let module = version_in(&cargo, "version =");
    assert_eq!(
        version_in(&package, "\"version\":"),
        module,
        "node/package.json"
    );
    assert_eq!(
        version_in(&code, "export const VERSION"),
        module,
        "node/src/version.ts"
    );
}

/// Runs `program args` in `dir`; its stdout, once it exited with success.
fn run(dir: &Path, program: &str, args: &[&str], env: &[(&str, String)]) -> String {
    let mut command = Command::new(program);
    command.args(args).current_dir(dir);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(
        output.status.success(),
        "{program} {args:?} in {}:\n{stdout}{stderr}",
        dir.display()
    );
    stdout.into_owned()
}

/// A new project in `scratch` that `npm install`s `spec` (a tarball, or a folder) with `flags`.
/// It depends on rate-limiter-flexible, the package's one required peer, at the version node/
/// pins (so that it installs from npm's cache), as an application that uses it has it.
fn app_installing(scratch: &Path, spec: &str, flags: &[&str]) -> std::path::PathBuf {
    let app = scratch.join("app");
    std::fs::create_dir_all(&app).expect("app dir");
    let pinned = std::fs::read_to_string(
        node::package_dir().join("node_modules/rate-limiter-flexible/package.json"),
    )
    .expect("node/'s rate-limiter-flexible");
    let version = pinned
        .split("\"version\"")
        .nth(1)
        .and_then(|rest| rest.split('"').nth(1))
        .expect("its version");
    let manifest = format!(
        "{{ \"name\": \"app\", \"private\": true, \"dependencies\": {{ \"rate-limiter-flexible\": \"{version}\" }} }}\n"
    );
    std::fs::write(app.join("package.json"), manifest).expect("package.json");
    run(
        &app,
        "npm",
        &[&["install", spec, "--no-audit", "--no-fund"], flags].concat(),
        &[],
    );
    app
}

/// A new project that depends on the tarball `spec` and on rate-limiter-flexible (installed with
/// no network), and on the client library, which it has as an application has it (here, a link
/// to node/'s).
fn project(scratch: &Path, spec: &str) -> std::path::PathBuf {
    let app = app_installing(scratch, spec, &["--offline"]);
    std::os::unix::fs::symlink(
        node::package_dir().join("node_modules/ioredis"),
        app.join("node_modules/ioredis"),
    )
    .expect("link ioredis");
    app
}

/// Both import styles, each entry point, and a lock taken and given back on the server.
fn use_it(app: &Path, server: &Server) {
    let port = [("GOBLIN_PORT", server.port.to_string())];
    let cjs = r#"
        const { Mutex, VERSION, MODULE_VERSION } = require('goblin-redis')
        const { RateLimiterGoblin } = require('goblin-redis/rate-limiter-flexible')
        const root = require('goblin-redis')
        const { GoblinStore } = require('goblin-redis/express')
        const Redis = require('ioredis')
        ;(async () => {
          const redis = new Redis(Number(process.env.GOBLIN_PORT))
          const mutex = new Mutex(redis, 'packed')
          await mutex.acquire()
          const res = await new RateLimiterGoblin({ storeClient: redis, points: 5, duration: 5 }).consume('packed')
          console.log('cjs', VERSION, MODULE_VERSION, mutex.isAcquired, res.remainingPoints, typeof GoblinStore, root.RateLimiterGoblin === RateLimiterGoblin)
          await mutex.release()
          redis.disconnect()
        })()
    "#;
    assert_eq!(
        run(app, "node", &["-e", cjs], &port).trim(),
        "cjs 0.4.0 400 true 4 function true"
    );
    let esm = r#"
        import { Semaphore, RateLimiterGoblinUnion, call, commands } from 'goblin-redis'
        import { fastifyRateLimit, goblinStore } from 'goblin-redis/fastify'
        import { RateLimiterGoblin } from 'goblin-redis/rate-limiter-flexible'
        import Redis from 'ioredis'
        const redis = new Redis(Number(process.env.GOBLIN_PORT))
        const semaphore = new Semaphore(redis, 'packed', 2)
        await semaphore.acquire()
        const window = await call(redis, commands.fwindow('packed:fw', 1000))
        console.log('esm', semaphore.isAcquired, window.count, typeof fastifyRateLimit, typeof goblinStore, typeof RateLimiterGoblin, typeof RateLimiterGoblinUnion)
        await semaphore.release()
        redis.disconnect()
    "#;
    assert_eq!(
        run(app, "node", &["--input-type=module", "-e", esm], &port).trim(),
        "esm true 1 function function function function"
    );
}

#[test]
fn the_packed_tarball_installs_and_works_both_ways() {
    node::built();
    let server = Server::start(Flavor::ALL[0]);
    let scratch = TempDir::new("npm-pack");
    let packed = run(
        &node::package_dir(),
        "npm",
        &[
            "pack",
            "--silent",
            "--pack-destination",
            &node::text(&scratch.0),
        ],
        &[],
    );
    let tarball = scratch
        .0
        .join(packed.trim().lines().last().expect("the tarball's name"));
    let listing = run(&scratch.0, "tar", &["tzf", &node::text(&tarball)], &[]);
    let files: Vec<&str> = listing.lines().collect();
    for wanted in [
        "package/package.json",
        "package/dist/cjs/index.js",
        "package/dist/cjs/index.d.ts",
        "package/dist/esm/index.js",
        "package/dist/esm/index.d.ts",
        "package/dist/esm/nest.js",
    ] {
        assert!(
            files.contains(&wanted),
            "{wanted} is not in the tarball: {files:?}"
        );
    }
    let outside: Vec<&&str> = files
        .iter()
        .filter(|f| {
            !f.starts_with("package/dist/")
                && **f != "package/package.json"
                && **f != "package/README.md"
        })
        .collect();
    assert!(
        outside.is_empty(),
        "the tarball holds more than dist/: {outside:?}"
    );
    let app = project(&scratch.0, &node::text(&tarball));
    use_it(&app, &server);
}

#[test]
fn npm_install_of_a_fresh_clones_node_folder_builds_it() {
    let server = Server::start(Flavor::ALL[0]);
    let scratch = TempDir::new("npm-clone");
    let clone = scratch.0.join("clone");
    run(
        &scratch.0,
        "git",
        &[
            "clone",
            "--quiet",
            "--no-local",
            &node::text(repo_root()),
            &node::text(&clone),
        ],
        &[],
    );
    assert!(!clone.join("node/node_modules").exists() && !clone.join("node/dist").exists());
    // The clone's `prepare` installs node/'s pinned tools (npm ci, from npm's cache when it has
    // them) and builds.
    let app = app_installing(
        &scratch.0,
        &node::text(&clone.join("node")),
        &["--prefer-offline"],
    );
    assert!(
        clone.join("node/dist/cjs/index.js").exists()
            && clone.join("node/dist/esm/index.js").exists()
    );
    let check =
        "const { Mutex, VERSION } = require('goblin-redis'); console.log(typeof Mutex, VERSION)";
    assert_eq!(
        run(
            &app,
            "node",
            &["-e", check],
            &[("GOBLIN_PORT", server.port.to_string())]
        )
        .trim(),
        "function 0.4.0"
    );
}
