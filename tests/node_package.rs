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

/// The version of `name` that node/ pins (what its node_modules holds, so npm's cache has it).
fn pinned(name: &str) -> String {
    let manifest = std::fs::read_to_string(
        node::package_dir().join(format!("node_modules/{name}/package.json")),
    )
    .unwrap_or_else(|_| panic!("node/'s {name}"));
    manifest
        .split("\"version\"")
        .nth(1)
        .and_then(|rest| rest.split('"').nth(1))
        .expect("its version")
        .to_string()
}

/// A new project in `scratch` that `npm install`s `spec` (a tarball, or a folder) with `flags`.
/// It depends on rate-limiter-flexible, the package's one required peer, and on `others`, each at
/// the version node/ pins (so that they install from npm's cache), as an application has them.
fn app_installing(
    scratch: &Path,
    spec: &str,
    flags: &[&str],
    others: &[&str],
) -> std::path::PathBuf {
    let app = scratch.join("app");
    std::fs::create_dir_all(&app).expect("app dir");
    let dependencies: Vec<String> = ["rate-limiter-flexible"]
        .iter()
        .chain(others)
        .map(|name| format!("\"{name}\": \"{}\"", pinned(name)))
        .collect();
    let manifest = format!(
        "{{ \"name\": \"app\", \"private\": true, \"dependencies\": {{ {} }} }}\n",
        dependencies.join(", ")
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
    let app = app_installing(scratch, spec, &["--offline"], &[]);
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

/// `npm pack` of node/ into `scratch`: the tarball's path.
fn pack(scratch: &Path) -> std::path::PathBuf {
    node::built();
    let packed = run(
        &node::package_dir(),
        "npm",
        &[
            "pack",
            "--silent",
            "--pack-destination",
            &node::text(scratch),
        ],
        &[],
    );
    scratch.join(packed.trim().lines().last().expect("the tarball's name"))
}

#[test]
fn the_packed_tarball_installs_and_works_both_ways() {
    let server = Server::start(Flavor::ALL[0]);
    let scratch = TempDir::new("npm-pack");
    let tarball = pack(&scratch.0);
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
        &[],
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

/// The optional peers (the client libraries, NestJS) never block an install: npm resolves an
/// optional peer the application has against its range, so each is `*`. An application on NestJS
/// 12 that uses the throttler's storage installs the tarball (with `^10 || ^11` it was ERESOLVE),
/// and so does one that has NestJS but wants only the locks.
#[test]
fn an_optional_peer_never_blocks_an_install() {
    let server = Server::start(Flavor::ALL[0]);
    let scratch = TempDir::new("npm-peers");
    let tarball = node::text(&pack(&scratch.0));
    let nest = [
        "@nestjs/common",
        "@nestjs/core",
        "@nestjs/throttler",
        "reflect-metadata",
        "rxjs",
        "ioredis",
    ];
    assert!(
        pinned("@nestjs/common").starts_with("12."),
        "node/ pins NestJS 12"
    );
    // NestJS's own dependencies (iterare, uid, ...) are in npm's cache as tarballs, not always
    // with their registry documents, which an install by version needs: from the cache first.
    let app = app_installing(&scratch.0, &tarball, &["--prefer-offline"], &nest);
    let check = r#"
        require('reflect-metadata')
        const { GoblinThrottlerStorage } = require('goblin-redis/nest')
        const { Mutex } = require('goblin-redis')
        const Redis = require('ioredis')
        ;(async () => {
          const redis = new Redis(Number(process.env.GOBLIN_PORT))
          const record = await new GoblinThrottlerStorage(redis).increment('peers', 1000, 2, 1000, 'default')
          const mutex = new Mutex(redis, 'peers')
          await mutex.acquire()
          console.log(require('@nestjs/common/package.json').version.split('.')[0], record.totalHits, record.isBlocked, mutex.isAcquired)
          await mutex.release()
          redis.disconnect()
        })()
    "#;
    let port = [("GOBLIN_PORT", server.port.to_string())];
    assert_eq!(
        run(&app, "node", &["-e", check], &port).trim(),
        "12 1 false true"
    );
    // NestJS without its throttler, and only the locks wanted.
    let locks_only = scratch.0.join("locks-only");
    std::fs::create_dir_all(&locks_only).expect("locks-only dir");
    let app = app_installing(
        &locks_only,
        &tarball,
        &["--prefer-offline"],
        &["@nestjs/common", "reflect-metadata", "rxjs", "ioredis"],
    );
    let check = r#"
        const { Mutex } = require('goblin-redis')
        const Redis = require('ioredis')
        ;(async () => {
          const redis = new Redis(Number(process.env.GOBLIN_PORT))
          const mutex = new Mutex(redis, 'peers-locks')
          await mutex.acquire()
          console.log(mutex.isAcquired)
          await mutex.release()
          redis.disconnect()
        })()
    "#;
    assert_eq!(run(&app, "node", &["-e", check], &port).trim(), "true");
}
