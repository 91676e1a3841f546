//! The test client speaks RESP3: on every server, `HELLO 3` switches a connection over, and
//! each RESP3 type the server can send is read as itself (doubles as the exact text sent,
//! nulls as RESP3's null, maps, sets, pushes, verbatim strings, attributes skipped).

mod common;
use common::*;

on_every_server! {
    fn hello_3_then_every_reply_type(flavor: Flavor) {
        let server = Server::builder(flavor).args(["--enable-debug-command", "local"]).start();
        let mut c = server.conn();
        // RESP2 until HELLO 3: its nulls are RESP2's.
        assert_eq!(c.call(&["GET", "missing"]), Reply::Nil);
        assert_eq!(c.call(&["ZSCORE", "missing", "m"]), Reply::Nil);

        let hello = c.hello3();
        assert_eq!(hello.get("proto"), Some(&Reply::Int(3)), "{hello:?}");
        let family = match flavor.family() {
            Family::Redis => "redis",
            Family::Valkey => "valkey",
        };
        assert_eq!(hello.get("server"), Some(&bulk(family)), "{hello:?}");
        let (major, minor) = flavor.version();
        let version = hello.get("version").expect("a version").text();
        assert!(version.starts_with(&format!("{major}.{minor}.")), "{version}");
        assert_eq!(hello.get("role"), Some(&bulk("master")), "{hello:?}");

        // Null, double, map, set, and doubles inside arrays.
        assert_eq!(c.call(&["GET", "missing"]), Reply::Null);
        assert_eq!(c.call(&["ZADD", "z", "1.5", "a", "-2", "b"]), Reply::Int(2));
        assert_eq!(c.call(&["ZSCORE", "z", "a"]), Reply::Double("1.5".into()));
        assert_eq!(c.call(&["ZSCORE", "z", "nobody"]), Reply::Null);
        assert_eq!(
            c.call(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]),
            Reply::Array(vec![
                Reply::Array(vec![bulk("b"), Reply::Double("-2".into())]),
                Reply::Array(vec![bulk("a"), Reply::Double("1.5".into())]),
            ])
        );
        assert_eq!(c.call(&["HSET", "h", "f", "v", "g", "w"]), Reply::Int(2));
        assert_eq!(
            c.call(&["HGETALL", "h"]),
            Reply::Map(vec![(bulk("f"), bulk("v")), (bulk("g"), bulk("w"))])
        );
        assert_eq!(c.call(&["HGETALL", "missing"]), Reply::Map(vec![]));
        assert_eq!(c.call(&["SADD", "s", "1", "2"]), Reply::Int(2));
        assert_eq!(c.call(&["SMEMBERS", "s"]), Reply::Set(vec![bulk("1"), bulk("2")]));

        // Goblin's replies and errors are the same in RESP3.
        assert_eq!(increx(&mut c, "k", "10"), Reply::Int(1));
        assert_eq!(zwindow(&mut c, "w", "1700000000.1234567", "60", "5", "a"), Reply::Int(1));
        assert_eq!(c.call(&["ZADD", "ref", "1700000000.1234567", "a"]), Reply::Int(1));
        let score = c.call(&["ZSCORE", "w", "a"]);
        // The text is the server's own (`1700000000.1234567` on 7.0, `1.7000000001234567e+9`
        // later): the same double either way, and the same text as a plain ZADD gets.
        let Reply::Double(text) = &score else { panic!("{score:?}") };
        assert_eq!(text.parse::<f64>(), Ok(1_700_000_000.123_456_7), "{text}");
        assert_eq!(score, c.call(&["ZSCORE", "ref", "a"]));
        assert_eq!(cad(&mut c, "w", "a"), Reply::Int(1));
        assert_eq!(increx(&mut c, "z", "10"), Reply::Error(WRONGTYPE.into()));
        let info = c.call(&["INFO", "goblin"]);
        assert!(matches!(&info, Reply::Verbatim { format, .. } if format == "txt"), "{info:?}");
        assert!(info.text().contains("goblin_increx_calls:2"), "{info:?}");

        // The types only DEBUG PROTOCOL sends.
        let debug = |c: &mut Conn, kind: &str| c.call(&["DEBUG", "PROTOCOL", kind]);
        assert_eq!(debug(&mut c, "null"), Reply::Null);
        assert_eq!(debug(&mut c, "double"), Reply::Double("3.141".into()));
        assert_eq!(debug(&mut c, "true"), Reply::Bool(true));
        assert_eq!(debug(&mut c, "false"), Reply::Bool(false));
        assert_eq!(
            debug(&mut c, "bignum"),
            Reply::BigNumber("1234567999999999999999999999999999999".into())
        );
        assert_eq!(
            debug(&mut c, "verbatim"),
            Reply::Verbatim { format: "txt".into(), text: b"This is a verbatim\nstring".to_vec() }
        );
        assert_eq!(
            debug(&mut c, "map"),
            Reply::Map(vec![
                (Reply::Int(0), Reply::Bool(false)),
                (Reply::Int(1), Reply::Bool(true)),
                (Reply::Int(2), Reply::Bool(false)),
            ])
        );
        assert_eq!(debug(&mut c, "set"), Reply::Set(vec![Reply::Int(0), Reply::Int(1), Reply::Int(2)]));
        // The attribute is read and skipped: the reply is what follows it.
        assert_eq!(debug(&mut c, "attrib"), bulk("Some real reply following the attribute"));
        // A push beside the reply: Redis 7.0 sends it first, later servers after the reply.
        let push = Reply::Push(vec![bulk("server-cpu-usage"), Reply::Int(42)]);
        let real = bulk("Some real reply following the push reply");
        let push_first = flavor.family() == Family::Redis && flavor.version() < (7, 2);
        let expected = if push_first { [push, real] } else { [real, push] };
        assert_eq!([debug(&mut c, "push"), c.read().expect("the second reply")], expected);
        assert_eq!(c.call(&["PING"]), Reply::Status("PONG".into()), "nothing left unread");

        // Pub/sub messages arrive as pushes.
        let mut sub = server.conn();
        sub.hello3();
        assert_eq!(
            sub.call(&["SUBSCRIBE", "ch"]),
            Reply::Push(vec![bulk("subscribe"), bulk("ch"), Reply::Int(1)])
        );
        assert_eq!(c.call(&["PUBLISH", "ch", "hi"]), Reply::Int(1));
        assert_eq!(
            sub.read().expect("a message"),
            Reply::Push(vec![bulk("message"), bulk("ch"), bulk("hi")])
        );
    }
}
