//! Keyspace events: every branch of every command fires what its Lua idiom fires on the same
//! server, in the same order, `new` (class `n`) included, and Valkey's `expired` for an EXPIRE
//! in the past. Each case prepares two keys the same way, runs the idiom on one and the
//! command on the other, and compares the two event sequences.

mod common;
use common::*;

/// GOBLIN.CAD's idiom: compare and delete a string, or remove a sorted-set member.
const CAD_LUA: &str = r#"local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'string' then
  if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
  return 0
end
if kind == 'zset' then return redis.call('ZREM', KEYS[1], ARGV[1]) end
if kind == 'none' then return 0 end
return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')"#;

/// One case: how both keys are prepared (`{}` stands for the key), and the arguments after
/// the key, for the command and for its idiom alike.
struct Case {
    name: &'static str,
    setup: &'static [&'static [&'static str]],
    command: &'static str,
    args: &'static [&'static str],
}

const fn case(
    name: &'static str,
    setup: &'static [&'static [&'static str]],
    command: &'static str,
    args: &'static [&'static str],
) -> Case {
    Case {
        name,
        setup,
        command,
        args,
    }
}

const CASES: &[Case] = &[
    // GOBLIN.INCREX key seconds
    case(
        "increx: first hit creates and arms",
        &[],
        "GOBLIN.INCREX",
        &["60"],
    ),
    case(
        "increx: a later hit",
        &[&["SET", "{}", "5", "EX", "100"]],
        "GOBLIN.INCREX",
        &["60"],
    ),
    case(
        "increx: a counter at 0 re-arms",
        &[&["SET", "{}", "-1"]],
        "GOBLIN.INCREX",
        &["60"],
    ),
    case(
        "increx: seconds 0 on a missing key",
        &[],
        "GOBLIN.INCREX",
        &["0"],
    ),
    case(
        "increx: negative seconds on a missing key",
        &[],
        "GOBLIN.INCREX",
        &["-5"],
    ),
    case(
        "increx: seconds 0 on a counter at -1",
        &[&["SET", "{}", "-1"]],
        "GOBLIN.INCREX",
        &["0"],
    ),
    case(
        "increx: not an integer",
        &[&["SET", "{}", "abc"]],
        "GOBLIN.INCREX",
        &["60"],
    ),
    case(
        "increx: wrong type",
        &[&["ZADD", "{}", "1", "m"]],
        "GOBLIN.INCREX",
        &["60"],
    ),
    case(
        "increx: overflow",
        &[&["SET", "{}", "9223372036854775807"]],
        "GOBLIN.INCREX",
        &["60"],
    ),
    // GOBLIN.ZWINDOW key now window limit member
    case(
        "zwindow: admit into a missing key",
        &[],
        "GOBLIN.ZWINDOW",
        &["100", "10", "2", "a"],
    ),
    case(
        "zwindow: admit beside a member",
        &[&["ZADD", "{}", "95", "x"]],
        "GOBLIN.ZWINDOW",
        &["100", "10", "2", "a"],
    ),
    case(
        "zwindow: evict some, admit",
        &[&["ZADD", "{}", "80", "x", "95", "y"]],
        "GOBLIN.ZWINDOW",
        &["100", "10", "2", "a"],
    ),
    case(
        "zwindow: evict all, admit",
        &[&["ZADD", "{}", "80", "x"]],
        "GOBLIN.ZWINDOW",
        &["100", "10", "1", "a"],
    ),
    case(
        "zwindow: refresh a holder",
        &[&["ZADD", "{}", "95", "a"]],
        "GOBLIN.ZWINDOW",
        &["100", "10", "2", "a"],
    ),
    case(
        "zwindow: refresh at the same score",
        &[&["ZADD", "{}", "100", "a"]],
        "GOBLIN.ZWINDOW",
        &["100", "10", "2", "a"],
    ),
    case(
        "zwindow: reject",
        &[&["ZADD", "{}", "95", "x"]],
        "GOBLIN.ZWINDOW",
        &["100", "10", "1", "a"],
    ),
    case(
        "zwindow: evict, then reject",
        &[&["ZADD", "{}", "80", "x", "95", "y"]],
        "GOBLIN.ZWINDOW",
        &["100", "10", "1", "a"],
    ),
    case(
        "zwindow: evict all, limit 0",
        &[&["ZADD", "{}", "80", "x"]],
        "GOBLIN.ZWINDOW",
        &["100", "10", "0", "a"],
    ),
    case(
        "zwindow: window 0 into a missing key",
        &[],
        "GOBLIN.ZWINDOW",
        &["100", "0", "1", "a"],
    ),
    case(
        "zwindow: window 0 beside a member",
        &[&["ZADD", "{}", "150", "x"]],
        "GOBLIN.ZWINDOW",
        &["100", "0", "2", "a"],
    ),
    case(
        "zwindow: negative window",
        &[&["ZADD", "{}", "150", "x"]],
        "GOBLIN.ZWINDOW",
        &["100", "-10", "2", "a"],
    ),
    case(
        "zwindow: wrong type",
        &[&["SET", "{}", "x"]],
        "GOBLIN.ZWINDOW",
        &["100", "10", "2", "a"],
    ),
    // GOBLIN.CAD key value
    case(
        "cad: the holder's token",
        &[&["SET", "{}", "t1", "PX", "100000"]],
        "GOBLIN.CAD",
        &["t1"],
    ),
    case(
        "cad: another token",
        &[&["SET", "{}", "t1"]],
        "GOBLIN.CAD",
        &["t2"],
    ),
    case(
        "cad: a member",
        &[&["ZADD", "{}", "1", "a", "2", "b"]],
        "GOBLIN.CAD",
        &["a"],
    ),
    case(
        "cad: the last member",
        &[&["ZADD", "{}", "1", "a"]],
        "GOBLIN.CAD",
        &["a"],
    ),
    case(
        "cad: not a member",
        &[&["ZADD", "{}", "1", "a"]],
        "GOBLIN.CAD",
        &["b"],
    ),
    case("cad: a missing key", &[], "GOBLIN.CAD", &["a"]),
    case(
        "cad: wrong type",
        &[&["HSET", "{}", "f", "v"]],
        "GOBLIN.CAD",
        &["a"],
    ),
];

/// The events of `args` on `key`, without the key names.
fn events(server: &Server, c: &mut Conn, args: &[String]) -> Vec<String> {
    keyspace_events(server, c, |c| {
        c.call(args);
    })
    .into_iter()
    .map(|event| event.split(' ').next().unwrap_or_default().to_string())
    .collect()
}

on_every_server! {
    fn every_branch_fires_the_events_of_its_lua_idiom(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        // `A` is every class but `n` (new keys) and `m` (key misses); `n` is asked for too.
        c.call(&["CONFIG", "SET", "notify-keyspace-events", "KEAn"]);
        let idioms = [
            ("GOBLIN.INCREX", c.call(&["SCRIPT", "LOAD", INCREX_LUA]).text()),
            ("GOBLIN.ZWINDOW", c.call(&["SCRIPT", "LOAD", ZWINDOW_LUA]).text()),
            ("GOBLIN.CAD", c.call(&["SCRIPT", "LOAD", CAD_LUA]).text()),
        ];
        for (n, case) in CASES.iter().enumerate() {
            let (lua_key, native_key) = (format!("lua:{n}"), format!("native:{n}"));
            for key in [&lua_key, &native_key] {
                for setup in case.setup {
                    let setup: Vec<&str> = setup.iter().map(|a| if *a == "{}" { key.as_str() } else { a }).collect();
                    c.call(&setup);
                }
            }
            let sha = &idioms.iter().find(|(command, _)| *command == case.command).expect("an idiom").1;
            let mut idiom = vec!["EVALSHA".to_string(), sha.clone(), "1".into(), lua_key.clone()];
            idiom.extend(case.args.iter().map(|a| a.to_string()));
            let mut native = vec![case.command.to_string(), native_key.clone()];
            native.extend(case.args.iter().map(|a| a.to_string()));
            let expected = events(&server, &mut c, &idiom);
            let fired = events(&server, &mut c, &native);
            assert_eq!(fired, expected, "{}: {native:?}", case.name);
            assert_eq!(snapshot(&mut c, &native_key).0, snapshot(&mut c, &lua_key).0, "{}: type", case.name);
        }
    }
}

on_every_server! {
    fn an_expiry_in_the_past_fires_what_this_server_fires(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
        // Valkey 8.1 and later fire `expired` for a key EXPIRE deletes at once; Redis fires `del`.
        let gone = match flavor.family() {
            Family::Valkey => "expired",
            Family::Redis => "del",
        };
        c.call(&["SET", "k", "0"]);
        let fired = keyspace_events(&server, &mut c, |c| {
            increx(c, "k", "0");
        });
        assert_eq!(fired, ["incrby k".to_string(), format!("{gone} k")]);
        let fired = keyspace_events(&server, &mut c, |c| {
            zwindow(c, "w", "1", "0", "1", "a");
        });
        assert_eq!(fired, ["zadd w".to_string(), format!("{gone} w")]);
        // The one exception (docs/contract.md): INCREX, the stand-in or the native, fires
        // Redis's `del` on every server, Valkey's included, as the Redis command does.
        c.call(&["SET", "n", "0"]);
        let fired = keyspace_events(&server, &mut c, |c| {
            assert_eq!(c.call(&["INCREX", "n", "PXAT", "1"]).array().len(), 2);
        });
        assert_eq!(fired, ["del n"]);
    }
}

on_every_server! {
    /// Where the idiom is not what the command does, the difference is the command's promise:
    /// it validates everything before it writes, so a bad `seconds` leaves no event, where the
    /// script's INCR has already run.
    fn an_invalid_call_fires_nothing_where_the_script_half_ran(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["CONFIG", "SET", "notify-keyspace-events", "KEAn"]);
        let sha = c.call(&["SCRIPT", "LOAD", INCREX_LUA]).text();
        let script = keyspace_events(&server, &mut c, |c| {
            assert!(c.call(&["EVALSHA", &sha, "1", "lua", "x"]).is_error());
        });
        assert_eq!(script, ["new lua", "incrby lua"]);
        let native = keyspace_events(&server, &mut c, |c| {
            assert!(increx(c, "native", "x").is_error());
        });
        assert_eq!(native, Vec::<String>::new());
    }
}
