//! One table per command, row for row its page's table of situations (`docs/commands/`): each
//! row has the page's situation text verbatim and the cases that show it (a setup, the call,
//! the reply, and a check of the effect the page's "effect" column states). `run_table` runs a
//! table on a server; `page_table` reads the page's, so tests/tables.rs can hold the two
//! together.

use super::*;

/// A page's row: its first column verbatim, and the cases that prove it.
pub struct Row {
    pub situation: &'static str,
    pub cases: &'static [Case],
}

/// One case of a row. In `setup` and `call`, `{}` is the case's own key and `{v}` each value of
/// `each` in turn (the case runs once per value; once if `each` is empty). A setup call whose
/// first word is `&` is sent by a client of its own, which waits in line (the setup goes on once
/// the server has blocked it) until the case is done: a caller waiting for the key. A last
/// setup call `^` (`ENDS_NOW`) makes the call in the millisecond the case's key expires, which
/// the setup armed a few milliseconds ahead (`call_as_it_ends`).
pub struct Case {
    pub setup: &'static [&'static [&'static str]],
    pub call: &'static [&'static str],
    pub each: &'static [&'static str],
    pub reply: Expect,
    pub effect: Effect,
}

pub enum Expect {
    Int(i64),
    /// An array of integers, exactly (GOBLIN.GCRA's `[limited, limit, remaining, ...]`).
    Ints(&'static [i64]),
    /// A bulk string.
    Bulk(&'static str),
    /// A status reply (`OK`).
    Status(&'static str),
    /// An array of bulk strings (INCREX BYFLOAT's `["2.5", "1.5"]`, in RESP2).
    Bulks(&'static [&'static str]),
    Null,
    /// An array, element by element.
    Array(&'static [Expect]),
    /// Any reply: a field that depends on the clock (a TTL in milliseconds).
    Any,
    /// A fencing token (`FENCE`): an integer, a time in microseconds since 2001 or later.
    Token,
    Error(&'static str),
}

impl Expect {
    fn reply(&self) -> Reply {
        match self {
            Expect::Int(n) => Reply::Int(*n),
            Expect::Ints(ns) => Reply::Array(ns.iter().map(|n| Reply::Int(*n)).collect()),
            Expect::Bulk(text) => bulk(text),
            Expect::Status(text) => Reply::Status(text.to_string()),
            Expect::Bulks(texts) => Reply::Array(texts.iter().map(|text| bulk(text)).collect()),
            Expect::Null => Reply::Nil,
            Expect::Error(e) => Reply::Error(e.to_string()),
            Expect::Array(_) | Expect::Any | Expect::Token => {
                unreachable!("a pattern is matched, not made")
            }
        }
    }

    /// Whether `reply` is what this expects.
    fn matches(&self, reply: &Reply) -> bool {
        match self {
            Expect::Any => true,
            Expect::Token => matches!(reply, Reply::Int(token) if *token > 1_000_000_000_000_000),
            Expect::Array(items) => match reply {
                Reply::Array(got) => {
                    got.len() == items.len() && items.iter().zip(got).all(|(e, g)| e.matches(g))
                }
                _ => false,
            },
            other => other.reply() == *reply,
        }
    }
}

/// What the key holds after the call: a string, or a sorted set as `members` lists it.
pub enum Value {
    Str(&'static str),
    Zset(&'static [&'static str]),
    /// A sorted set's members, without their scores (times on the server's clock).
    Members(&'static [&'static str]),
}

/// The page's "effect" column, as a check.
pub enum Effect {
    /// Nothing written: the key's snapshot and the dirty counter are unchanged.
    Nothing,
    /// The key is gone.
    Deleted,
    /// The key holds `value`, without a TTL.
    Persisted { value: Value },
    /// The key holds `value`, expiring at the absolute Unix time `at_ms`.
    ExpiresAt { value: Value, at_ms: i64 },
    /// The key holds `value`, its expiry `by_ms` later than before the call.
    ExtendedBy { value: Value, by_ms: i64 },
    /// GOBLIN.SWINDOW's counts stored: `start:current:previous`, the current window's start
    /// being that of the server's clock at the call, and the key expiring two windows after it.
    Counts {
        current: i64,
        previous: i64,
        window_ms: i64,
    },
    /// The key holds `value` with a TTL armed at server time + `ttl_ms`, the server time being
    /// read just before and just after the call.
    Armed { value: Value, ttl_ms: i64 },
    /// The key holds `value`, its absolute expiry (or none) exactly what it was before the call.
    TtlKept { value: Value },
    /// GOBLIN.GCRA's TAT stored: the key holds a string, a plain decimal integer, `ahead_us`
    /// microseconds after a whole millisecond of the server's clock no earlier than the case's
    /// setup began (the first call of the setup starts the TAT moving; on a fresh key, the call
    /// itself) and no later than the call returned; and the key expires at that TAT, floored
    /// to the millisecond: when the quota is full again.
    Tat { ahead_us: i64 },
    /// CL.THROTTLE's TAT stored in redis-cell's form: the key holds a string, the decimal text
    /// of a `u64`, `ahead_ns` nanoseconds after a whole millisecond of the server's clock no
    /// earlier than the case's setup began and no later than the call returned; and the key
    /// expires at that TAT, floored to the millisecond.
    CellTat { ahead_ns: i64 },
    /// As `CellTat`, for a TAT under a millisecond ahead: the key expires in its call's own
    /// millisecond, so it is either still there as `CellTat` says or already gone; written
    /// either way (the dirty counter moved).
    CellTatEnding { ahead_ns: i64 },
}

/// The last setup call of a case whose call is made in the millisecond its key expires (`Case`).
pub const ENDS_NOW: &[&str] = &["^"];

/// A script that makes the call in ARGV when KEYS[1] expires in the script's own millisecond
/// (`PTTL` 0: the server still holds a key in the millisecond of its expiry), reading the key's
/// value and expiry before and after it; otherwise it replies the `PTTL` and makes nothing.
/// Inside a script Redis 7.2+ and Valkey read one snapshot of the clock, so the call meets the
/// same millisecond; Redis 7.0's `PTTL` and Goblin read the wall clock, later than the script's
/// lookups, so there the call meets that millisecond or a later one, the key still found.
const WHEN_IT_ENDS: &str = r#"
local ttl = redis.call('PTTL', KEYS[1])
if ttl ~= 0 then return ttl end
local before = {redis.call('GET', KEYS[1]), redis.call('PEXPIRETIME', KEYS[1])}
local reply = redis.pcall(unpack(ARGV))
local after = {redis.call('GET', KEYS[1]), redis.call('PEXPIRETIME', KEYS[1])}
return {reply, before, after}
"#;

/// What `call_as_it_ends` saw: the call's reply; the key's value and expiry just before and
/// just after it (in the same millisecond); the dirty counter before and after; and the
/// server's clock before and after.
pub struct Ending {
    pub reply: Reply,
    pub before: Reply,
    pub after: Reply,
    pub dirty: (i64, i64),
    pub t0: i64,
    pub t1: i64,
}

/// Sends `setup` (armed on `key` a few milliseconds ahead), then `call` in the script
/// `WHEN_IT_ENDS` until the script finds the key in the millisecond of its expiry and makes it;
/// the setup again, on the key afresh, each time the key was gone first. Bounded by setups, each
/// waiting for its key's expiry on the server's clock.
pub fn call_as_it_ends(c: &mut Conn, setup: &[Vec<String>], call: &[String], key: &str) -> Ending {
    const SETUPS: usize = 1000;
    let sha = c.call(&["SCRIPT", "LOAD", WHEN_IT_ENDS]).text();
    let mut script = vec!["EVALSHA".to_string(), sha, "1".into(), key.to_string()];
    script.extend(call.iter().cloned());
    let dirty_command = || -> Vec<String> { ["INFO", "persistence"].map(String::from).to_vec() };
    for _ in 0..SETUPS {
        c.call(&["DEL", key]);
        for words in setup {
            let reply = c.call(words);
            assert!(!reply.is_error(), "setup {words:?}: {reply:?}");
        }
        loop {
            let replies = c.pipeline(&[
                dirty_command(),
                vec!["TIME".to_string()],
                script.clone(),
                vec!["TIME".to_string()],
                dirty_command(),
            ]);
            match &replies[2] {
                Reply::Int(-2) => break,
                Reply::Int(ttl) => assert!(*ttl > 0, "setup {setup:?} armed no expiry: {ttl}"),
                Reply::Array(made) => {
                    let dirty = |reply: &Reply| -> i64 {
                        reply
                            .text()
                            .lines()
                            .find_map(|line| line.strip_prefix("rdb_changes_since_last_save:"))
                            .and_then(|n| n.trim().parse().ok())
                            .expect("rdb_changes_since_last_save")
                    };
                    return Ending {
                        reply: made[0].clone(),
                        before: made[1].clone(),
                        after: made[2].clone(),
                        dirty: (dirty(&replies[0]), dirty(&replies[4])),
                        t0: time_ms(&replies[1]),
                        t1: time_ms(&replies[3]),
                    };
                }
                other => panic!("{call:?} as {key} ends: {other:?}"),
            }
        }
    }
    panic!("{call:?}: {SETUPS} setups, and no call met {key}'s last millisecond");
}

/// Runs a case whose call is made as its key ends (`ENDS_NOW`): the reply, and the effect:
/// nothing written (the key as it was around the call, in its millisecond, and the dirty
/// counter), or a new window armed.
fn run_ending(c: &mut Conn, case: &Case, key: &str, value: &str, what: &str) {
    let setup: Vec<Vec<String>> = case
        .setup
        .iter()
        .filter(|words| **words != ENDS_NOW)
        .map(|words| fill(words, key, value))
        .collect();
    let call = fill(case.call, key, value);
    let ending = call_as_it_ends(c, &setup, &call, key);
    assert!(
        case.reply.matches(&ending.reply),
        "{what}: {:?}",
        ending.reply
    );
    match &case.effect {
        Effect::Nothing => {
            assert_eq!(ending.after, ending.before, "{what}: the key changed");
            assert_eq!(ending.dirty.1, ending.dirty.0, "{what}: wrote something");
        }
        Effect::Armed { value, ttl_ms } => {
            assert_value(&snapshot(c, key), value, what);
            assert_expires_after(c, key, *ttl_ms, ending.t0, ending.t1);
        }
        Effect::Persisted { value } => {
            let after = snapshot(c, key);
            assert_value(&after, value, what);
            assert_eq!(after.2, -1, "{what}: a TTL is left");
        }
        _ => panic!("{what}: a case made as its key ends states nothing, or a counter written"),
    }
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
        Value::Members(members) => {
            assert_eq!(state.0, "zset", "{what}");
            let names: Vec<String> = state.1.texts().into_iter().step_by(2).collect();
            assert_eq!(names, *members, "{what}");
        }
    }
}

/// The command a table is about as a server has it natively, to run the table's cases on
/// (GOBLIN.GCRA's on Redis 8.10 built with GCRA).
pub struct Native {
    /// The name the cases call Goblin's command by (any case).
    pub ours: &'static str,
    /// The native command's name.
    pub theirs: &'static str,
    /// The cases the native cannot take: Goblin's deliberate differences from it.
    pub differs: fn(&Case) -> bool,
}

impl Native {
    fn rename(&self, words: Vec<String>) -> Vec<String> {
        words
            .into_iter()
            .map(|w| {
                if w.eq_ignore_ascii_case(self.ours) {
                    self.theirs.to_string()
                } else {
                    w
                }
            })
            .collect()
    }

    /// The native's reply where Goblin's is `expected`: the error texts name the native
    /// command.
    fn reply(&self, expected: Reply) -> Reply {
        match expected {
            Reply::Error(e) => Reply::Error(e.replace(
                &format!("'{}'", self.ours.to_ascii_lowercase()),
                &format!("'{}'", self.theirs.to_ascii_lowercase()),
            )),
            other => other,
        }
    }
}

/// Runs every case of every row on `c`, each on a key of its own (named after `name`).
pub fn run_table(c: &mut Conn, name: &str, rows: &[Row]) {
    run_rows(c, name, rows, None);
}

/// Runs the cases of `rows` that `native` can take on `c`, a server with the native command
/// (and without Goblin), under the native name: the same replies (error texts naming the
/// native command), and the same effects on the key's existence and expiry (not on its value:
/// the native keeps a type of its own). Returns how many calls it made.
pub fn run_table_natively(c: &mut Conn, name: &str, rows: &[Row], native: &Native) -> usize {
    run_rows(c, name, rows, Some(native))
}

fn run_rows(c: &mut Conn, name: &str, rows: &[Row], native: Option<&Native>) -> usize {
    let mut calls = 0;
    for (r, row) in rows.iter().enumerate() {
        assert!(!row.cases.is_empty(), "{}: no case", row.situation);
        for (n, case) in row.cases.iter().enumerate() {
            if native.is_some_and(|native| (native.differs)(case)) {
                continue;
            }
            let each: &[&str] = if case.each.is_empty() {
                &[""]
            } else {
                case.each
            };
            for (i, value) in each.iter().enumerate() {
                let key = format!("{name}:row{r}:case{n}:{i}");
                let rename = |words: Vec<String>| match native {
                    Some(native) => native.rename(words),
                    None => words,
                };
                if case.setup.last() == Some(&ENDS_NOW) {
                    assert!(
                        native.is_none(),
                        "{}: as its key ends, natively",
                        row.situation
                    );
                    let what = format!("{}: {:?} as {key} ends", row.situation, case.call);
                    run_ending(c, case, &key, value, &what);
                    calls += 1;
                    continue;
                }
                let setup_began = server_ms(c);
                let mut waiters = Vec::new();
                for setup in case.setup {
                    let setup = rename(fill(setup, &key, value));
                    if setup.first().map(String::as_str) == Some("&") {
                        waiters.push(waiting_client(c, &setup[1..], waiters.len() + 1));
                        continue;
                    }
                    let reply = c.call(&setup);
                    assert!(
                        !reply.is_error(),
                        "{}: setup {setup:?}: {reply:?}",
                        row.situation
                    );
                }
                let call = rename(fill(case.call, &key, value));
                let what = format!("{}: {call:?}", row.situation);
                // The native's error texts name the native command.
                let matches = |reply: &Reply| match (native, &case.reply) {
                    (Some(native), Expect::Error(_)) => *reply == native.reply(case.reply.reply()),
                    _ => case.reply.matches(reply),
                };
                calls += 1;
                if let Effect::Nothing = case.effect {
                    let args: Vec<&str> = call.iter().map(String::as_str).collect();
                    assert_writes_nothing_matching(c, &args, &key, matches);
                    continue;
                }
                let before = snapshot(c, &key);
                let dirty_before = dirty(c);
                let (t0, reply, t1) = (server_ms(c), c.call(&call), server_ms(c));
                assert!(matches(&reply), "{what}: {reply:?}");
                let after = snapshot(c, &key);
                match &case.effect {
                    Effect::Nothing => unreachable!(),
                    Effect::Deleted => {
                        assert_eq!(c.call(&["EXISTS", &key]), Reply::Int(0), "{what}");
                        assert_eq!(after, ("none".to_string(), Reply::Nil, -2), "{what}");
                    }
                    Effect::Persisted { value } => {
                        if native.is_none() {
                            assert_value(&after, value, &what);
                        }
                        assert_eq!(after.2, -1, "{what}: a TTL is left");
                    }
                    Effect::Counts {
                        current,
                        previous,
                        window_ms,
                    } => {
                        let text = after.1.text();
                        let start = |ms: i64| ms.div_euclid(*window_ms) * window_ms;
                        let fits = (start(t0)..=start(t1))
                            .step_by(*window_ms as usize)
                            .any(|s| {
                                text == format!("{s}:{current}:{previous}")
                                    && after.2 == s + 2 * window_ms
                            });
                        assert!(
                            after.0 == "string" && fits,
                            "{what}: {after:?}, expected {current}:{previous} in a window of {window_ms} ms at [{t0}, {t1}]"
                        );
                    }
                    Effect::ExtendedBy { value, by_ms } => {
                        if native.is_none() {
                            assert_value(&after, value, &what);
                        }
                        assert_eq!(after.2, before.2 + by_ms, "{what}: the expiry");
                    }
                    Effect::ExpiresAt { value, at_ms } => {
                        if native.is_none() {
                            assert_value(&after, value, &what);
                        }
                        assert_eq!(after.2, *at_ms, "{what}: the expiry");
                    }
                    Effect::Armed { value, ttl_ms } => {
                        if native.is_none() {
                            assert_value(&after, value, &what);
                        }
                        assert_expires_after(c, &key, *ttl_ms, t0, t1);
                    }
                    Effect::TtlKept { value } => {
                        if native.is_none() {
                            assert_value(&after, value, &what);
                        }
                        assert_eq!(after.2, before.2, "{what}: the expiry changed");
                    }
                    // Gone, or going while it was read.
                    Effect::CellTatEnding { .. }
                        if after.0 == "none" || after.1 == Reply::Nil || after.2 == -2 =>
                    {
                        assert!(dirty(c) > dirty_before, "{what}: nothing was written");
                    }
                    Effect::CellTat { ahead_ns } | Effect::CellTatEnding { ahead_ns } => {
                        assert_eq!(after.0, "string", "{what}: the TAT is a string");
                        let text = after.1.text();
                        let tat: u64 = text
                            .parse()
                            .unwrap_or_else(|_| panic!("{what}: TAT {text:?}"));
                        assert_eq!(tat.to_string(), text, "{what}: a plain decimal");
                        let tat = i128::from(tat);
                        let lowest = i128::from(setup_began) * 1_000_000 + i128::from(*ahead_ns);
                        let highest = i128::from(t1) * 1_000_000 + i128::from(*ahead_ns);
                        assert!(
                            (lowest..=highest).contains(&tat),
                            "{what}: TAT {tat}, expected {ahead_ns} ns after a time in \
                             [{setup_began}, {t1}] ms"
                        );
                        assert_eq!(
                            (tat - i128::from(*ahead_ns)).rem_euclid(1_000_000),
                            0,
                            "{what}: TAT {tat} is not {ahead_ns} ns after a whole millisecond"
                        );
                        assert_eq!(
                            i128::from(after.2),
                            tat.div_euclid(1_000_000),
                            "{what}: the key expires at its TAT {tat}"
                        );
                    }
                    Effect::Tat { ahead_us } => {
                        let lowest = setup_began * 1000 + ahead_us;
                        let highest = t1 * 1000 + ahead_us;
                        if native.is_none() {
                            assert_eq!(after.0, "string", "{what}: the TAT is a string");
                            let text = after.1.text();
                            let tat: i64 = text
                                .parse()
                                .unwrap_or_else(|_| panic!("{what}: TAT {text:?}"));
                            assert_eq!(tat.to_string(), text, "{what}: a plain decimal");
                            assert!(
                                (lowest..=highest).contains(&tat),
                                "{what}: TAT {tat}, expected {ahead_us} us after a time in \
                                 [{setup_began}, {t1}] ms"
                            );
                            assert_eq!(
                                (tat - ahead_us).rem_euclid(1000),
                                0,
                                "{what}: TAT {tat} is not {ahead_us} us after a whole millisecond"
                            );
                            assert_eq!(
                                after.2,
                                tat.div_euclid(1000),
                                "{what}: the key expires at its TAT {tat}"
                            );
                        } else {
                            assert!(
                                (lowest.div_euclid(1000)..=highest.div_euclid(1000))
                                    .contains(&after.2),
                                "{what}: expires at {}, expected {ahead_us} us after a time in \
                                 [{setup_began}, {t1}] ms, floored",
                                after.2
                            );
                        }
                    }
                }
            }
        }
    }
    calls
}

/// The table of situations of the page at `page` (relative to the repository), under its
/// `## Situations` heading: each row's first two columns (situation, reply), verbatim.
pub fn page_table(page: &str) -> Vec<(String, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(page);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{page}: {e}"));
    let section: Vec<&str> = text
        .lines()
        .skip_while(|line| *line != "## Situations")
        .skip(1)
        .take_while(|line| !line.starts_with("## "))
        .collect();
    assert!(
        !section.is_empty(),
        "{page} has no section \"## Situations\""
    );
    let header = section
        .iter()
        .position(|line| line.starts_with("| situation |") || line.starts_with("| key holds |"))
        .unwrap_or_else(|| panic!("{page}: no table of situations"));
    assert!(
        section[header + 1].starts_with("|---"),
        "{page}: no separator row"
    );
    section[header + 2..]
        .iter()
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            assert_eq!(cells.len(), 3, "{page}: a row without three cells: {line}");
            (
                cells[0].trim_start_matches("| ").to_string(),
                cells[1].to_string(),
            )
        })
        .collect()
}

/// The code spans of a cell: `` `a` (`b` for ...) `` gives `a`, `b`.
fn code_spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// Whether the `n`th code span of a reply cell states the error `e`: the same text; or, for an
/// elided span (`... and max_burst ...`), the span before it with the words it shows in place
/// of words there, and in no other place (so not the span before it itself).
fn states_error(spans: &[&str], n: usize, e: &str) -> bool {
    let span = spans[n];
    let elided = span
        .strip_prefix("... ")
        .and_then(|rest| rest.strip_suffix(" ..."));
    let (Some(shown), Some(full)) = (elided, n.checked_sub(1).map(|p| spans[p])) else {
        return span == e;
    };
    let Some(at) = e.find(shown) else {
        return false;
    };
    let first = e[..at].split(' ').count() - 1;
    let shown_words = first..first + shown.split(' ').count();
    let (ours, theirs): (Vec<&str>, Vec<&str>) =
        (e.split(' ').collect(), full.split(' ').collect());
    e != full
        && ours.len() == theirs.len()
        && (0..ours.len()).all(|w| ours[w] == theirs[w] || shown_words.contains(&w))
}

/// The fields of an array reply cell, `` `[0, limit, remaining, -1, reset_after]` `` or
/// `` `["2.5", "1.5"]` ``; `None` if the cell is not an array.
fn array_cell(cell: &str) -> Option<Vec<&str>> {
    let fields = code_spans(cell)
        .first()?
        .strip_prefix('[')?
        .strip_suffix(']')?;
    Some(fields.split(", ").collect())
}

/// The top-level fields of `[a, [b, c], ...]`; `None` if `text` is not one bracketed list.
fn list_fields(text: &str) -> Option<Vec<&str>> {
    let inner = text.strip_prefix('[')?.strip_suffix(']')?;
    let (mut fields, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (at, byte) in inner.bytes().enumerate() {
        match byte {
            b'[' => depth += 1,
            b']' => depth -= 1,
            b',' if depth == 0 => {
                fields.push(inner[start..at].trim());
                start = at + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    (depth == 0).then(|| {
        fields.push(inner[start..].trim());
        fields
    })
}

/// Whether the list `text` states `items`: field for field (see `field_fits`), a nested list
/// for a nested array (`Ints` or `Array`), and a last field `...` for any further items.
fn list_fits(text: &str, items: &[Expect]) -> bool {
    let Some(fields) = list_fields(text) else {
        return false;
    };
    let open_ended = fields.last() == Some(&"...");
    let stated = if open_ended {
        &fields[..fields.len() - 1]
    } else {
        &fields[..]
    };
    if items.len() < stated.len() || (!open_ended && items.len() != stated.len()) {
        return false;
    }
    stated.iter().zip(items).all(|(field, item)| match item {
        _ if field.starts_with('[') => match item {
            Expect::Ints(ns) => {
                fits_array(&format!("`{field}`"), ns)
                    || list_fields(field).is_some_and(|f| {
                        f.last() == Some(&"...")
                            && f.len() - 1 <= ns.len()
                            && f[..f.len() - 1]
                                .iter()
                                .zip(ns.iter())
                                .all(|(f, n)| f.parse::<i64>().map_or(true, |k| k == *n))
                    })
            }
            Expect::Array(inner) => list_fits(field, inner),
            _ => false,
        },
        _ => field_fits(field, item),
    })
}

/// Whether a field of an array cell states `item`: a number states an integer, a quoted text a
/// bulk string, `nil` a null; a word (`previous_ttl_ms`) states nothing.
fn field_fits(field: &str, item: &Expect) -> bool {
    let quoted = field.starts_with('"');
    match (field.parse::<i64>(), item) {
        (Ok(k), Expect::Int(n)) => k == *n,
        (Ok(_), _) => false,
        (Err(_), Expect::Bulk(text)) if quoted => field == format!("{text:?}"),
        (Err(_), Expect::Null) if field == "nil" => true,
        // A word names the field and states nothing of it.
        (Err(_), _) => !quoted && field != "nil",
    }
}

/// Whether the array `ns` fits a reply cell `[0, limit, remaining, -1, reset_after]`: as many
/// fields, and the cell's numbers where it has numbers.
fn fits_array(cell: &str, ns: &[i64]) -> bool {
    array_cell(cell).is_some_and(|fields| {
        fields.len() == ns.len()
            && fields
                .iter()
                .zip(ns)
                .all(|(field, n)| field.parse::<i64>().map_or(true, |k| k == *n))
    })
}

/// Asserts that `rows` are the rows of the page at `page`, in order, and that every case's reply
/// is the one the page's reply column states, where it states one (`(integer) 1`, an error
/// text, an array's fixed fields, a bulk string, `(nil)`). A reply cell may state several errors
/// (`` `ERR a` (`ERR b` for ...) ``): each case's error must be one of them, and each of them
/// some case's error.
pub fn assert_rows_are_the_page_table(page: &str, rows: &[Row]) {
    let heading = page;
    let table = page_table(page);
    let documented: Vec<&str> = table.iter().map(|(s, _)| s.as_str()).collect();
    let tested: Vec<&str> = rows.iter().map(|row| row.situation).collect();
    assert_eq!(
        tested, documented,
        "{page}: the tests' rows are not the page's"
    );
    for ((situation, reply), row) in table.iter().zip(rows) {
        let stated = reply.trim_matches('`');
        let spans = code_spans(reply);
        let mut proven = vec![false; spans.len()];
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
                Expect::Ints(ns) => assert!(
                    fits_array(reply, ns),
                    "{heading}: {situation}: reply {ns:?}, the page says {reply}"
                ),
                Expect::Bulks(texts) => {
                    let quoted: Vec<String> = texts.iter().map(|t| format!("{t:?}")).collect();
                    assert_eq!(
                        array_cell(reply),
                        Some(quoted.iter().map(String::as_str).collect()),
                        "{heading}: {situation}"
                    );
                }
                Expect::Bulk(text) => assert!(
                    spans.first() == Some(&format!("{text:?}").as_str()),
                    "{heading}: {situation}: reply {text:?}, the page says {reply}"
                ),
                Expect::Null => assert_eq!(stated, "(nil)", "{heading}: {situation}"),
                Expect::Status(text) => assert_eq!(stated, *text, "{heading}: {situation}"),
                // An array in the cell's first code span, nested arrays and a trailing `...`
                // (any further fields) included; a cell in words only states no fields.
                Expect::Array(items) => assert!(
                    spans.is_empty() || list_fits(spans[0], items),
                    "{heading}: {situation}: the page says {reply}"
                ),
                Expect::Any => {}
                Expect::Token => assert!(
                    stated.contains("fencing token"),
                    "{heading}: {situation}: a token, the page says {reply}"
                ),
                Expect::Error(e) => {
                    let stating: Vec<usize> = (0..spans.len())
                        .filter(|&n| states_error(&spans, n, e))
                        .collect();
                    assert!(
                        !stating.is_empty(),
                        "{heading}: {situation}: {e:?} is not in the page's {reply}"
                    );
                    for n in stating {
                        proven[n] = true;
                    }
                }
            }
        }
        if row
            .cases
            .iter()
            .any(|case| matches!(case.reply, Expect::Error(_)))
        {
            for (span, proven) in spans.iter().zip(proven) {
                assert!(proven, "{heading}: {situation}: no case replies {span:?}");
            }
        }
    }
}

/// A client of `c`'s server that sent `args` and waits in line, once the server has blocked it
/// (the `n`th client of its case to wait).
fn waiting_client(c: &mut Conn, args: &[String], n: usize) -> Conn {
    let mut waiter = Conn::connect(c.port()).expect("another client");
    waiter.send(args).expect("send");
    let blocked = |c: &mut Conn| info_field(c, "clients", "blocked_clients").parse::<usize>();
    assert!(
        wait_until(std::time::Duration::from_secs(10), || blocked(c) == Ok(n)),
        "{args:?} did not wait"
    );
    waiter
}
