//! One table per command, row for row the README's table of situations: each row has the
//! README's situation text verbatim and the cases that show it (a setup, the call, the reply,
//! and a check of the effect the README's "effect" column states). `run_table` runs a table on
//! a server; `readme_table` reads the README's, so tests/readme.rs can hold the two together.

use super::*;

/// A README row: its first column verbatim, and the cases that prove it.
pub struct Row {
    pub situation: &'static str,
    pub cases: &'static [Case],
}

/// One case of a row. In `setup` and `call`, `{}` is the case's own key and `{v}` each value of
/// `each` in turn (the case runs once per value; once if `each` is empty).
pub struct Case {
    pub setup: &'static [&'static [&'static str]],
    pub call: &'static [&'static str],
    pub each: &'static [&'static str],
    pub reply: Expect,
    pub effect: Effect,
}

pub enum Expect {
    Int(i64),
    Error(&'static str),
}

impl Expect {
    fn reply(&self) -> Reply {
        match self {
            Expect::Int(n) => Reply::Int(*n),
            Expect::Error(e) => Reply::Error(e.to_string()),
        }
    }
}

/// What the key holds after the call: a string, or a sorted set as `members` lists it.
pub enum Value {
    Str(&'static str),
    Zset(&'static [&'static str]),
}

/// The README's "effect" column, as a check.
pub enum Effect {
    /// Nothing written: the key's snapshot and the dirty counter are unchanged.
    Nothing,
    /// The key is gone.
    Deleted,
    /// The key holds `value` with a TTL armed at server time + `ttl_ms`, the server time being
    /// read just before and just after the call.
    Armed { value: Value, ttl_ms: i64 },
    /// The key holds `value`, its absolute expiry (or none) exactly what it was before the call.
    TtlKept { value: Value },
}

/// A case with no `each`.
pub const fn case(
    setup: &'static [&'static [&'static str]],
    call: &'static [&'static str],
    reply: Expect,
    effect: Effect,
) -> Case {
    Case {
        setup,
        call,
        each: &[],
        reply,
        effect,
    }
}

fn fill(words: &[&str], key: &str, value: &str) -> Vec<String> {
    words
        .iter()
        .map(|w| w.replace("{}", key).replace("{v}", value))
        .collect()
}

fn assert_value(state: &(String, Reply, i64), value: &Value, what: &str) {
    match value {
        Value::Str(text) => assert_eq!(
            (state.0.as_str(), &state.1),
            ("string", &bulk(text)),
            "{what}"
        ),
        Value::Zset(items) => {
            assert_eq!(state.0, "zset", "{what}");
            assert_eq!(state.1.texts(), *items, "{what}");
        }
    }
}

/// Runs every case of every row on `c`, each on a key of its own (named after `name`).
pub fn run_table(c: &mut Conn, name: &str, rows: &[Row]) {
    for (r, row) in rows.iter().enumerate() {
        assert!(!row.cases.is_empty(), "{}: no case", row.situation);
        for (n, case) in row.cases.iter().enumerate() {
            let each: &[&str] = if case.each.is_empty() {
                &[""]
            } else {
                case.each
            };
            for (i, value) in each.iter().enumerate() {
                let key = format!("{name}:row{r}:case{n}:{i}");
                for setup in case.setup {
                    let setup = fill(setup, &key, value);
                    let reply = c.call(&setup);
                    assert!(
                        !reply.is_error(),
                        "{}: setup {setup:?}: {reply:?}",
                        row.situation
                    );
                }
                let call = fill(case.call, &key, value);
                let what = format!("{}: {call:?}", row.situation);
                let expected = case.reply.reply();
                if let Effect::Nothing = case.effect {
                    let args: Vec<&str> = call.iter().map(String::as_str).collect();
                    assert_writes_nothing(c, &args, &key, &expected);
                    continue;
                }
                let before = snapshot(c, &key);
                let (t0, reply, t1) = (server_ms(c), c.call(&call), server_ms(c));
                assert_eq!(reply, expected, "{what}");
                let after = snapshot(c, &key);
                match &case.effect {
                    Effect::Nothing => unreachable!(),
                    Effect::Deleted => {
                        assert_eq!(c.call(&["EXISTS", &key]), Reply::Int(0), "{what}");
                        assert_eq!(after, ("none".to_string(), Reply::Nil, -2), "{what}");
                    }
                    Effect::Armed { value, ttl_ms } => {
                        assert_value(&after, value, &what);
                        assert_expires_after(c, &key, *ttl_ms, t0, t1);
                    }
                    Effect::TtlKept { value } => {
                        assert_value(&after, value, &what);
                        assert_eq!(after.2, before.2, "{what}: the expiry changed");
                    }
                }
            }
        }
    }
}

/// The README's table of situations in the section whose heading starts with `heading`: each
/// row's first two columns (situation, reply), verbatim.
pub fn readme_table(heading: &str) -> Vec<(String, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let section: Vec<&str> = readme
        .lines()
        .skip_while(|line| !line.starts_with(heading))
        .skip(1)
        .take_while(|line| !line.starts_with("## "))
        .collect();
    assert!(!section.is_empty(), "README.md has no section {heading:?}");
    let header = section
        .iter()
        .position(|line| line.starts_with("| situation |") || line.starts_with("| key holds |"))
        .unwrap_or_else(|| panic!("{heading}: no table of situations"));
    assert!(
        section[header + 1].starts_with("|---"),
        "{heading}: no separator row"
    );
    section[header + 2..]
        .iter()
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            assert_eq!(
                cells.len(),
                3,
                "{heading}: a row without three cells: {line}"
            );
            (
                cells[0].trim_start_matches("| ").to_string(),
                cells[1].to_string(),
            )
        })
        .collect()
}

/// Asserts that `rows` are the README's rows, in order, and that every case's reply is the one
/// the README's reply column states, where it states one (`(integer) 1`, an error text).
pub fn assert_rows_are_the_readme_table(heading: &str, rows: &[Row]) {
    let readme = readme_table(heading);
    let documented: Vec<&str> = readme.iter().map(|(s, _)| s.as_str()).collect();
    let tested: Vec<&str> = rows.iter().map(|row| row.situation).collect();
    assert_eq!(
        tested, documented,
        "{heading}: the tests' rows are not the README's"
    );
    for ((situation, reply), row) in readme.iter().zip(rows) {
        let stated = reply.trim_matches('`');
        for case in row.cases {
            match &case.reply {
                Expect::Int(n) => {
                    if let Some(k) = stated.strip_prefix("(integer) ") {
                        if let Ok(k) = k.parse::<i64>() {
                            assert_eq!(*n, k, "{heading}: {situation}");
                        }
                    } else {
                        assert_eq!(stated, "(as above)", "{heading}: {situation}: reply {n}");
                    }
                }
                Expect::Error(e) => assert_eq!(stated, *e, "{heading}: {situation}"),
            }
        }
    }
}
