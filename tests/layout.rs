//! What the docs claim of the code, checked on the code itself (no server): where `unsafe` may
//! be, that every command is registered, documented and in the README, that error texts live
//! in one place, that the README is a front door, and that nothing names a file outside the
//! repository.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file under `dir` (relative to the repository) whose name ends in one of `endings`,
/// leaving out build output and what the install scripts download.
fn files(dir: &str, endings: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, endings: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                let skipped = ["target", ".servers", ".git", "node_modules", ".venv"];
                if !skipped.contains(&name.as_str()) && !name.starts_with('.') || name == ".ci" {
                    walk(&path, endings, out);
                }
            } else if endings.iter().any(|ending| name.ends_with(ending)) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join(dir), endings, &mut out);
    out.sort();
    out
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The command files: every `.rs` in a family's folder under `src/commands/`, the `mod.rs`s
/// left out.
fn command_files() -> Vec<PathBuf> {
    files("src/commands", &[".rs"])
        .into_iter()
        .filter(|path| !path.ends_with("mod.rs"))
        .collect()
}

/// The command a command file defines: its type (`pub struct X;`) and its name (`name: c"x"`).
fn command_of(path: &Path) -> (String, String) {
    let text = read(path);
    let ty = text
        .lines()
        .find_map(|line| line.strip_prefix("pub struct ")?.strip_suffix(';'))
        .unwrap_or_else(|| panic!("{}: no `pub struct X;`", relative(path)));
    let name = text
        .split("name: c\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("{}: no `name: c\"...\"` in its Spec", relative(path)));
    (ty.to_string(), name.to_string())
}

/// The benchmark's floor module (`bench/floor`) calls the server's raw API without Goblin's
/// wrapper, whose cost is part of what the floor is measured against; its `unsafe` is confined
/// to its one file of API calls, as Goblin's is to `src/server/`.
const FLOOR_API: &str = "bench/floor/src/api.rs";

#[test]
fn unsafe_is_allowed_only_in_src_server() {
    let allow = ["allow(", "unsafe_code)"].concat();
    let mut found = Vec::new();
    for dir in [
        "src", "core", "testkit", "bench", "fuzz", "tests", "examples",
    ] {
        for path in files(dir, &[".rs"]) {
            let name = relative(&path);
            if read(&path).contains(&allow) && !name.starts_with("src/server/") && name != FLOOR_API
            {
                found.push(name);
            }
        }
    }
    assert!(
        found.is_empty(),
        "{allow} outside src/server/ and {FLOOR_API}: {found:?}"
    );
    for lib in ["src/lib.rs", "bench/floor/src/lib.rs"] {
        assert!(
            read(&root().join(lib)).contains("#![deny(unsafe_code)]"),
            "{lib} denies unsafe code"
        );
    }
}

#[test]
fn the_core_forbids_unsafe() {
    let core = read(&root().join("core/src/lib.rs"));
    assert!(core.contains("#![forbid(unsafe_code)]"));
}

#[test]
fn every_command_file_is_in_the_table() {
    let lib = read(&root().join("src/lib.rs"));
    for path in command_files() {
        let (ty, _) = command_of(&path);
        assert!(
            lib.contains(&format!("registration::<{ty}>()")),
            "{} defines {ty}, which src/lib.rs does not register",
            relative(&path)
        );
    }
}

#[test]
fn every_command_has_its_page_and_the_readme_lists_it() {
    let readme = read(&root().join("README.md"));
    let mut pages: Vec<String> = command_files()
        .iter()
        .map(|path| format!("docs/commands/{}.md", command_of(path).1))
        .collect();
    pages.sort();
    for page in &pages {
        assert!(root().join(page).exists(), "no {page}");
        assert!(
            readme.contains(&format!("]({page})")),
            "the README does not link {page}"
        );
    }
    let mut documented: Vec<String> = files("docs/commands", &[".md"])
        .iter()
        .map(|p| relative(p))
        .collect();
    documented.sort();
    assert_eq!(
        documented, pages,
        "a page for every command, and a command for every page"
    );
}

/// The option words (`COST`, `PERMITS`, `FENCE` ...) of a synopsis: its upper-case words after
/// the command's name.
fn option_words(synopsis: &str) -> Vec<String> {
    let mut words: Vec<String> = synopsis
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '.' && c != '_')
        .skip_while(|word| word.is_empty())
        .skip(1)
        .filter(|word| word.len() > 1 && word.chars().all(|c| c.is_ascii_uppercase()))
        .map(String::from)
        .collect();
    words.sort();
    words.dedup();
    words
}

/// The README's synopsis of a Goblin command names every option its page's synopsis names
/// (the first line of the page's first code block): the front door may shorten an argument's
/// name, never leave an option out.
#[test]
fn the_readme_synopses_name_every_option() {
    let readme = read(&root().join("README.md")).replace('\n', " ");
    let mut checked = 0;
    for link in readme.split("[`").skip(1) {
        let Some((synopsis, rest)) = link.split_once("`](") else {
            continue;
        };
        let Some(page) = rest
            .split(')')
            .next()
            .filter(|page| page.starts_with("docs/commands/goblin."))
        else {
            continue;
        };
        let text = read(&root().join(page));
        let page_synopsis = text
            .split("```")
            .nth(1)
            .and_then(|block| block.lines().find(|line| !line.trim().is_empty()))
            .and_then(|line| line.split("->").next())
            .unwrap_or_else(|| panic!("{page}: no synopsis in a code block"));
        assert_eq!(
            option_words(synopsis),
            option_words(page_synopsis),
            "README.md's `{synopsis}` against {page}'s `{}`",
            page_synopsis.trim()
        );
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} synopses found in README.md");
}

/// The README's line for `make lint` names every tool the Makefile's `lint` target runs.
#[test]
fn the_readme_says_what_make_lint_runs() {
    let makefile = read(&root().join("Makefile"));
    let recipe: String = makefile
        .split("\nlint:")
        .nth(1)
        .expect("a lint target in the Makefile")
        .lines()
        .skip(1)
        .take_while(|line| line.starts_with('\t'))
        .collect::<Vec<_>>()
        .join("\n");
    let readme = read(&root().join("README.md"));
    let line = readme
        .lines()
        .find(|line| line.starts_with("make lint"))
        .expect("README.md: a make lint line");
    let tools = [
        ("cargo fmt", "rustfmt"),
        ("cargo clippy", "clippy"),
        ("ruff", "ruff"),
        ("mypy --strict", "mypy --strict"),
        ("tsc", "tsc"),
        ("eslint", "eslint"),
        ("rubocop", "rubocop"),
        ("rbs", "rbs"),
        ("php -d display_errors=stderr -l", "php -l"),
        ("phpcs", "phpcs"),
        ("analyse.mjs", "Intelephense"),
    ];
    let mut ran = 0;
    for (runs, says) in tools {
        if recipe.contains(runs) {
            ran += 1;
            assert!(
                line.contains(says),
                "make lint runs {runs}; README.md's line: {line}"
            );
        }
    }
    assert!(ran >= 4, "the lint recipe as read: {recipe}");
    for dir in ["fuzz/", "bench/floor"] {
        assert!(
            !recipe.contains(dir)
                || line.contains(dir.trim_end_matches('/').rsplit('/').next().unwrap_or(dir)),
            "make lint checks {dir}; README.md's line: {line}"
        );
    }
}

/// The paths `code` names after `prefix` (`super::`, `commands::`), one level of braces
/// spread: `super::{a, b::c}` names `a` and `b::c`.
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let rest = &code[at + prefix.len()..];
        let path_char = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
        if let Some(group) = rest.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or("");
            paths.extend(group.split(',').map(|path| path.trim().to_string()));
        } else {
            let end = rest.find(|c: char| !path_char(c)).unwrap_or(rest.len());
            paths.push(rest[..end].to_string());
        }
    }
    paths
}

/// docs/architecture.md: a command's file imports no other command's file, in its family or
/// another. What a family of commands shares is its folder's `mod.rs`, what families share is
/// `src/commands/mod.rs`.
#[test]
fn no_command_file_imports_another() {
    let files = command_files();
    // Each command file's module path under `commands::`: (family, file).
    let module = |path: &Path| -> (String, String) {
        let name = |path: &Path| {
            path.file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        };
        let stem = path
            .file_stem()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        (name(path.parent().expect("a folder")), stem)
    };
    let mut found = Vec::new();
    for path in &files {
        let (family, own) = module(path);
        let others: Vec<(String, String)> = files
            .iter()
            .map(|other| module(other))
            .filter(|(f, stem)| (f, stem) != (&family, &own))
            .collect();
        for (n, line) in read(path).lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let segments = |path: &str| -> Vec<String> {
                // `a as b`: the path is `a`.
                let path = path.split_whitespace().next().unwrap_or("");
                path.split("::").map(str::to_string).collect()
            };
            // `super::` in a command file is its family's module: a sibling is its first step.
            let sibling = paths_after(code, "super::").iter().any(|path| {
                let first = segments(path).remove(0);
                others
                    .iter()
                    .any(|(f, stem)| *f == family && *stem == first)
            });
            let any = paths_after(code, "commands::").iter().any(|path| {
                let steps = segments(path);
                others
                    .iter()
                    .any(|(f, stem)| steps.len() >= 2 && steps[0] == *f && steps[1] == *stem)
            });
            if sibling || any {
                found.push(format!("{}:{}: {}", relative(path), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "command files importing another's: {found:#?}"
    );
}

/// docs/architecture.md: `server/` imports nothing above it; `lib.rs` hands it the module's
/// description (`server::entry_points!`).
#[test]
fn the_server_layer_imports_nothing_above_it() {
    let mut found = Vec::new();
    for path in files("src/server", &[".rs"]) {
        for (n, line) in read(&path).lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("crate::") && !code.contains("crate::server") {
                found.push(format!("{}:{}: {}", relative(&path), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "server/ reaching above it: {found:#?}");
}

/// The lines of `code` (a file's text) that name a part of the crate outside `allowed`: a
/// `crate::part` path, in a `use` or anywhere else.
fn naming_outside(code: &str, allowed: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for (at, _) in code.match_indices("crate::") {
            let part: String = code[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '{')
                .collect();
            // `crate::{a, b}`: every name in the group.
            let named: Vec<String> = if part.ends_with('{') || part.is_empty() {
                code[at..]
                    .split_once('{')
                    .and_then(|(_, rest)| rest.split_once('}'))
                    .map(|(group, _)| {
                        group
                            .split(',')
                            .map(|name| name.trim().split("::").next().unwrap_or("").to_string())
                            .filter(|name| !name.is_empty())
                            .collect()
                    })
                    .unwrap_or_default()
            } else {
                vec![part]
            };
            for name in named {
                if !allowed.contains(&name.as_str()) {
                    found.push(format!("{}: {} ({name})", n + 1, line.trim()));
                }
            }
        }
    }
    found
}

/// Dependencies point down: commands sit on the line (`src/waiting/`), the line on the grants
/// (`src/grant.rs`), the grants on fencing and effects, all of them on `src/server/`. Nothing
/// below calls back up: what a layer may name of the crate, each layer's files checked.
#[test]
fn dependencies_point_down() {
    let layers: &[(&str, &[&str])] = &[
        (
            "src/waiting",
            &["waiting", "grant", "effects", "error", "server"],
        ),
        (
            "src/grant.rs",
            &["grant", "fencing", "effects", "error", "server"],
        ),
        ("src/fencing", &["fencing", "effects", "error", "server"]),
        ("src/effects.rs", &["effects", "server"]),
    ];
    let mut found = Vec::new();
    for (place, allowed) in layers {
        let single = root().join(place);
        let paths = if single.is_file() {
            vec![single]
        } else {
            files(place, &[".rs"])
        };
        assert!(!paths.is_empty(), "{place}: nothing to check");
        for path in paths {
            for line in naming_outside(&read(&path), allowed) {
                found.push(format!("{}:{line}", relative(&path)));
            }
        }
    }
    assert!(found.is_empty(), "a layer reaching above it: {found:#?}");
    // The check itself catches both spellings of the loop that was: the line calling up into a
    // command family.
    assert_eq!(
        naming_outside("use crate::commands;", layers[0].1).len(),
        1,
        "a plain import"
    );
    assert_eq!(
        naming_outside("use crate::{grant, commands::rwlock};", layers[0].1).len(),
        1,
        "an import in a group"
    );
    assert!(naming_outside("use crate::grant::{self, in_line};", layers[0].1).is_empty());
}

#[test]
fn error_texts_live_in_error_rs() {
    let mut found = Vec::new();
    for path in files("src", &[".rs"]) {
        let rel = relative(&path);
        // The commands' own words, and the server's shared ones (server/error.rs, which
        // error.rs re-exports).
        if rel == "src/error.rs" || rel == "src/server/error.rs" {
            continue;
        }
        for (n, line) in read(&path).lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("Message(") || code.contains("\"ERR ") || code.contains("\"WRONGTYPE ")
            {
                // The one text outside error.rs: the entry point's fallback, for a reply that
                // cannot even be made a C string.
                if !(rel == "src/server/entry.rs" && code.contains("ERR goblin internal error")) {
                    found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "error texts outside src/error.rs: {found:#?}"
    );
}

/// docs/architecture.md: `effects.rs` is the one place the module writes a key. Outside it
/// (and the `server/` layer that wraps the server's API), no key is changed, and core's
/// algorithms that write a set they are handed (`zwindow::admit`, `cost::admit`, the model's)
/// are not called.
#[test]
fn every_write_goes_through_effects_rs() {
    let writes = [
        ".set_string(",
        ".set_abs_expire(",
        ".remove_ttl(",
        ".delete()",
        ".unlink()",
        ".zadd(",
        ".zrem(",
        "zwindow::evict(",
        "zwindow::admit(",
        "cost::admit(",
        "SortedWindowMut",
    ];
    let mut outside = Vec::new();
    for path in files("src", &[".rs"]) {
        let name = relative(&path);
        if name == "src/effects.rs" || name.starts_with("src/server/") {
            continue;
        }
        for (n, line) in read(&path).lines().enumerate() {
            if writes.iter().any(|write| line.contains(write)) {
                outside.push(format!("{name}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        outside.is_empty(),
        "writes outside src/effects.rs: {outside:#?}"
    );
}

/// docs/architecture.md: nothing is initialised lazily.
#[test]
fn nothing_is_initialised_lazily() {
    let lazy = [
        "LazyLock",
        "LazyCell",
        "lazy_static",
        "once_cell",
        "get_or_init",
    ];
    let mut found = Vec::new();
    for path in files("src", &[".rs"])
        .into_iter()
        .chain(files("core/src", &[".rs"]))
    {
        for (n, line) in read(&path).lines().enumerate() {
            if lazy.iter().any(|word| line.contains(word)) {
                found.push(format!("{}:{}: {}", relative(&path), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// The module's version is Cargo.toml's, in Rust (`MODULE LIST`'s `ver`, derived from it) and
/// in Python (`goblin_redis.__version__`, from which the package derives the module version it
/// needs): one text, held equal here; tests/module.rs checks what MODULE LIST shows.
#[test]
fn the_python_package_is_the_modules_version() {
    let cargo = read(&root().join("Cargo.toml"));
    let cargo = cargo
        .lines()
        .find_map(|line| line.strip_prefix("version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .expect("Cargo.toml's version");
    assert_eq!(cargo, env!("CARGO_PKG_VERSION"));
    let python = read(&root().join("python/src/goblin_redis/__init__.py"));
    let python = python
        .lines()
        .find_map(|line| line.strip_prefix("__version__ = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .expect("goblin_redis.__version__ on a line of its own");
    assert_eq!(python, cargo);
}

#[test]
fn the_readme_is_a_front_door() {
    let lines = read(&root().join("README.md")).lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; the rest belongs in docs/"
    );
}

#[test]
fn every_link_in_the_docs_points_into_the_repository() {
    for path in files("", &[".md"]) {
        let text = read(&path);
        let dir = path.parent().expect("a folder");
        for link in text
            .split("](")
            .skip(1)
            .filter_map(|rest| rest.split(')').next())
        {
            if link.starts_with("http") || link.starts_with('#') {
                continue;
            }
            let target = link.split('#').next().unwrap_or(link);
            assert!(
                dir.join(target).exists(),
                "{} links {link}, which is not in the repository",
                relative(&path)
            );
        }
    }
}

/// The patterns of a reference to a file outside the repository, as a reader without it would
/// meet them; spelled in pieces here, so that this file holds none of them.
#[test]
fn nothing_names_a_file_outside_the_repository() {
    let upward = ["..", "/shared"].concat();
    let contract = ["SP", "EC"].concat();
    let native = ["NAT", "IVE.md"].concat();
    let mut found = Vec::new();
    for path in files("", &[".rs", ".md", ".sh"]) {
        for (n, line) in read(&path).lines().enumerate() {
            let hit = line.contains(&upward)
                || line.contains(&format!("{contract}.md"))
                || has_possessive(line, &contract)
                || line.contains(&native)
                || names_a_seed_document(line);
            if hit {
                found.push(format!("{}:{}: {}", relative(&path), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// The contract's name in the possessive: the word, any one character, an `s`, and the end of
/// the word.
fn has_possessive(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(at, _)| {
        let rest = &line.as_bytes()[at + word.len()..];
        rest.len() >= 2
            && rest[1] == b's'
            && rest
                .get(2)
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
    })
}

/// The design documents by their old name (the word with an article before it, or followed by
/// "session"), not a random generator's starting value.
fn names_a_seed_document(line: &str) -> bool {
    let word = "seed";
    let ends_word = |rest: &[u8]| {
        rest.first()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
    };
    line.contains(&format!("{word} session"))
        || ["the ", "The "].iter().any(|article| {
            line.match_indices(&format!("{article}{word}"))
                .any(|(at, m)| {
                    let rest = &line.as_bytes()[at + m.len()..];
                    ends_word(rest) || (rest.first() == Some(&b's') && ends_word(&rest[1..]))
                })
        })
}

#[test]
fn the_readmes_benchmark_figures_are_the_latest_results() {
    let readme = read(&root().join("README.md"));
    let open = readme
        .find("<!-- headline")
        .expect("README.md: a headline block");
    let body = open
        + readme[open..]
            .find("-->")
            .expect("the block's opening comment ends")
        + 3;
    let close = body
        + readme[body..]
            .find("<!-- /headline -->")
            .expect("README.md: the block's end");
    let headline = read(&root().join("bench/results/headline.md"));
    assert_eq!(
        readme[body..close].trim(),
        headline.trim(),
        "README.md's benchmark figures are not bench/results/headline.md: run `make bench`"
    );
    assert!(headline.contains("GOBLIN.ZWINDOW"), "{headline}");
}
