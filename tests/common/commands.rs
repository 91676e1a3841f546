//! The module's commands as the server itself describes them (`COMMAND LIST FILTERBY MODULE
//! goblin`, `COMMAND INFO`, `COMMAND DOCS`), and calls generated from those descriptions: the
//! storm and hygiene tests take their commands from here, so they cover every command the
//! module registered on the server, and every command added later, without a list of their own.

use super::*;

/// One argument of a command, as `COMMAND DOCS` gives it.
#[derive(Debug, Clone)]
pub struct ArgShape {
    pub name: String,
    /// `key`, `string`, `integer`, `double`, `unix-time`, `pure-token`, `oneof` or `block`.
    pub kind: String,
    pub token: Option<String>,
    pub optional: bool,
    pub multiple: bool,
    pub children: Vec<ArgShape>,
}

/// A command of the module, as the server registered it.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Lower case, as registered.
    pub name: String,
    /// `COMMAND INFO`'s arity: the exact count of words if positive, the least if negative.
    pub arity: i64,
    pub flags: Vec<String>,
    pub args: Vec<ArgShape>,
}

impl Shape {
    /// Whether a call of `words` words (the name included) passes the server's arity check.
    pub fn arity_fits(&self, words: usize) -> bool {
        let words = words as i64;
        if self.arity >= 0 {
            words == self.arity
        } else {
            words >= -self.arity
        }
    }

    /// What the server replies to a call that fails the arity check.
    pub fn arity_error(&self) -> String {
        format!("ERR wrong number of arguments for '{}' command", self.name)
    }

    pub fn is_goblins_own(&self) -> bool {
        self.name.starts_with("goblin.")
    }

    /// A call built from the argument docs: each optional argument in or out, each choice one
    /// of its alternatives, each repeated one once to three times (a count before it mostly
    /// saying how many), tokens in any letter case, and half the time the optional arguments
    /// in another order. `value` gives a value for an
    /// argument of a kind, `key` a key name.
    pub fn generate(
        &self,
        rng: &mut Rng,
        value: &mut dyn FnMut(&mut Rng, &ArgShape) -> Vec<u8>,
        key: &mut dyn FnMut(&mut Rng) -> Vec<u8>,
    ) -> Vec<Vec<u8>> {
        let mut chunks: Vec<(bool, Vec<Vec<u8>>)> = Vec::with_capacity(self.args.len());
        let mut counts = Vec::with_capacity(self.args.len());
        for arg in &self.args {
            let mut words = Vec::new();
            counts.push(emit(arg, rng, value, key, &mut words));
            chunks.push((arg.optional, words));
        }
        // A count before a repeated argument (GOBLIN.MGCRA's `numpolicies`) says, two times
        // in three, how many times it came; otherwise it keeps its value, valid or not.
        for i in 1..self.args.len() {
            let (count, repeated) = (&self.args[i - 1], &self.args[i]);
            if count.name.starts_with("num")
                && count.kind == "integer"
                && repeated.multiple
                && chunks[i - 1].1.len() == 1
                && rng.below(3) != 0
            {
                chunks[i - 1].1[0] = counts[i].to_string().into_bytes();
            }
        }
        if rng.below(2) == 0 {
            let slots: Vec<usize> = (0..chunks.len()).filter(|&i| chunks[i].0).collect();
            for i in (1..slots.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                chunks.swap(slots[i], slots[j]);
            }
        }
        std::iter::once(self.name.as_bytes().to_vec())
            .chain(chunks.into_iter().flat_map(|(_, words)| words))
            .collect()
    }
}

fn random_case(rng: &mut Rng, token: &str) -> Vec<u8> {
    token
        .bytes()
        .map(|byte| {
            if rng.below(4) == 0 {
                byte.to_ascii_lowercase()
            } else {
                byte
            }
        })
        .collect()
}

fn emit(
    arg: &ArgShape,
    rng: &mut Rng,
    value: &mut dyn FnMut(&mut Rng, &ArgShape) -> Vec<u8>,
    key: &mut dyn FnMut(&mut Rng) -> Vec<u8>,
    words: &mut Vec<Vec<u8>>,
) -> u64 {
    if arg.optional && rng.below(2) == 0 {
        return 0;
    }
    let times = if arg.multiple { 1 + rng.below(3) } else { 1 };
    for _ in 0..times {
        if let Some(token) = &arg.token {
            words.push(random_case(rng, token));
        }
        match arg.kind.as_str() {
            "pure-token" => {}
            "key" => words.push(key(rng)),
            "oneof" => {
                let choice = rng.pick(&arg.children).clone();
                let _ = emit(
                    &ArgShape {
                        optional: false,
                        ..choice
                    },
                    rng,
                    value,
                    key,
                    words,
                );
            }
            "block" => {
                for child in &arg.children {
                    let _ = emit(child, rng, value, key, words);
                }
            }
            _ => words.push(value(rng, arg)),
        }
    }
    times
}

/// A RESP3 map, or a RESP2 array of alternating names and values, as pairs.
fn pairs(reply: &Reply) -> Vec<(String, Reply)> {
    match reply {
        Reply::Map(pairs) => pairs.iter().map(|(k, v)| (k.text(), v.clone())).collect(),
        Reply::Array(items) => items
            .chunks(2)
            .map(|pair| (pair[0].text(), pair[1].clone()))
            .collect(),
        other => panic!("expected a map, got {other:?}"),
    }
}

fn arg_shape(reply: &Reply) -> ArgShape {
    let fields = pairs(reply);
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let flags: Vec<String> = match field("flags") {
        Some(Reply::Array(items)) | Some(Reply::Set(items)) => {
            items.iter().map(|flag| flag.text()).collect()
        }
        _ => Vec::new(),
    };
    ArgShape {
        name: field("name").expect("an argument's name").text(),
        kind: field("type").expect("an argument's type").text(),
        token: field("token").map(|token| token.text()),
        optional: flags.iter().any(|flag| flag == "optional"),
        multiple: flags.iter().any(|flag| flag == "multiple"),
        children: match field("arguments") {
            Some(Reply::Array(children)) => children.iter().map(arg_shape).collect(),
            _ => Vec::new(),
        },
    }
}

/// Every command the module registered on the server `c` is connected to, sorted by name.
pub fn module_commands(c: &mut Conn) -> Vec<Shape> {
    let mut names = c
        .call(&["COMMAND", "LIST", "FILTERBY", "MODULE", "goblin"])
        .texts();
    names.sort();
    assert!(
        !names.is_empty(),
        "the server lists no command of the module"
    );
    names
        .into_iter()
        .map(|name| {
            let info = c.call(&["COMMAND", "INFO", &name]);
            let info = info.array()[0].array();
            let flags = match &info[2] {
                Reply::Array(items) | Reply::Set(items) => items.iter().map(Reply::text).collect(),
                other => panic!("{name}: flags {other:?}"),
            };
            let docs = c.call(&["COMMAND", "DOCS", &name]);
            let (_, doc) = pairs(&docs)
                .into_iter()
                .next()
                .unwrap_or_else(|| panic!("{name}: no COMMAND DOCS"));
            let args = pairs(&doc)
                .into_iter()
                .find(|(k, _)| k == "arguments")
                .map(|(_, v)| v.array().iter().map(arg_shape).collect())
                .unwrap_or_default();
            Shape {
                name,
                arity: info[1].int(),
                flags,
                args,
            }
        })
        .collect()
}
