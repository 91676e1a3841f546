//! CL.THROTTLE, the stand-in for redis-cell's command, on every server: its page's rows; the
//! state in redis-cell's own form, both ways (keys written by hand as redis-cell writes them,
//! with known TATs, read and advanced to the nanosecond; keys Goblin writes, parsed as
//! redis-cell parses them); what crashes redis-cell refused with nothing written; the surface;
//! replicas and the AOF. The comparison with the real redis-cell is by hand
//! (tests/cl_throttle_redis_cell.rs): it is not on crates.io, and CI cannot fetch it.

mod common;
use common::*;

fn throttle(c: &mut Conn, args: &[&str]) -> Reply {
    let mut call = vec!["CL.THROTTLE"];
    call.extend_from_slice(args);
    c.call(&call)
}

fn fields(reply: &Reply) -> Vec<i64> {
    reply.array().iter().map(Reply::int).collect()
}

/// Every word of a reply, depth first: a key spec or a GETKEYSANDFLAGS answer, flattened.
fn words(reply: &Reply) -> Vec<String> {
    match reply {
        Reply::Array(items) | Reply::Set(items) => items.iter().flat_map(words).collect(),
        Reply::Map(pairs) => pairs
            .iter()
            .flat_map(|(k, v)| [words(k), words(v)].concat())
            .collect(),
        Reply::Int(n) => vec![n.to_string()],
        other => vec![other.text()],
    }
}

/// redis-cell's rounding of a time in nanoseconds to seconds (for the times here, under 2^24
/// seconds): the whole seconds, one more if a whole millisecond is left over.
fn seconds(nanos: i128) -> i64 {
    let (whole, fraction) = (nanos / 1_000_000_000, nanos % 1_000_000_000);
    (whole + i128::from(fraction >= 1_000_000)) as i64
}

/// The TAT a key holds, as redis-cell reads it (`u64::from_str`).
fn tat(c: &mut Conn, key: &str) -> u64 {
    let text = c.call(&["GET", key]).text();
    text.parse()
        .unwrap_or_else(|_| panic!("{key} holds {text:?}, not a TAT redis-cell reads"))
}

on_every_server! {
    /// The rows again, with the AOF on: every TAT stored reaches it (the stream replicas get)
    /// as `SET key tat PXAT ms`, with the key's own value and expiry, and nothing there names
    /// CL.THROTTLE, so a replica without the module rebuilds it.
    fn tats_are_propagated_as_set_pxat(flavor: Flavor) {
        let dir = TempDir::new("cell-table-aof");
        let server = Server::builder(flavor).dir(&dir.0).args(AOF_ALWAYS).start();
        let mut c = server.conn();
        run_table(&mut c, "t", CL_THROTTLE_ROWS);
        let aof = aof_text(&dir.0);
        assert!(!aof.to_ascii_lowercase().contains("throttle"), "the AOF names CL.THROTTLE");
        let commands = aof_commands(&aof);
        // The allowed row's keys, each written (some gone since: a TAT under a millisecond
        // ahead expires in its call's millisecond).
        let keys: Vec<String> = CL_THROTTLE_ROWS[0]
            .cases
            .iter()
            .enumerate()
            .flat_map(|(n, case)| (0..case.each.len().max(1)).map(move |i| format!("t:row0:case{n}:{i}")))
            .collect();
        assert_eq!(keys.len(), 8, "the allowed row's keys: {keys:?}");
        for key in keys {
            let last = commands
                .iter()
                .rfind(|command| command[0] == "SET" && command.get(1) == Some(&key))
                .unwrap_or_else(|| panic!("no SET in the AOF for {key}"));
            // redis-cell's TAT, expiring at it floored to the millisecond.
            let tat: u64 = last[2].parse().unwrap_or_else(|_| panic!("{key}: {last:?}"));
            assert_eq!(last[3..], ["PXAT".to_string(), (tat / 1_000_000).to_string()], "{key}");
            // A TAT under a millisecond ahead may be gone already (its key expired).
            if c.call(&["EXISTS", &key]) == Reply::Int(1) {
                let tat = c.call(&["GET", &key]).text();
                let at = c.call(&["PEXPIRETIME", &key]).int().to_string();
                assert_eq!(last, &["SET", &key, &tat, "PXAT", &at], "{key}");
            }
        }
    }
}

on_every_server! {
    /// From redis-cell to Goblin: keys as redis-cell writes them (the TAT in nanoseconds,
    /// expiring at the TAT floored to the millisecond), TATs known to the nanosecond, read and
    /// moved on by exactly one interval per token.
    fn a_tat_redis_cell_wrote_is_read_to_the_nanosecond(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let now = i128::from(server_ms(&mut c)) * 1_000_000;
        // 90.5 s and 123 ns ahead; 3 + 1 at once, one a minute.
        let written = (now + 90_500_000_123) as u64;
        for (key, text) in [
            ("cell:plain", written.to_string()),
            ("cell:plus", format!("+{written}")),
            ("cell:zeros", format!("000{written}")),
        ] {
            let at = (written / 1_000_000).to_string();
            c.call(&["SET", key, &text, "PXAT", &at]);
            let t0 = i128::from(server_ms(&mut c)) * 1_000_000;
            let reply = fields(&throttle(&mut c, &[key, "3", "1", "60"]));
            let t1 = i128::from(server_ms(&mut c)) * 1_000_000;
            let moved = i128::from(written) + 60_000_000_000;
            // Allowed; its reply from the TAT as it now stands, at the instant of the call.
            let at_instant = |now: i128| {
                let ttl = moved - now;
                vec![0, 4, ((240_000_000_000 - ttl) / 1000 / 60_000_000) as i64, -1, seconds(ttl)]
            };
            assert!(
                (t0..=t1).step_by(1_000_000).any(|now| at_instant(now) == reply),
                "{key}: {reply:?} at [{t0}, {t1}]"
            );
            assert_eq!(i128::from(tat(&mut c, key)), moved, "{key}: the TAT moved one interval");
            assert_eq!(c.call(&["GET", key]).text(), moved.to_string(), "{key}: redis-cell's form");
            assert_eq!(
                i128::from(c.call(&["PEXPIRETIME", key]).int()),
                moved / 1_000_000,
                "{key}: the expiry redis-cell gives it"
            );
        }

        // A TAT past i64::MAX nanoseconds (2262), which redis-cell writes as a u64: read and
        // moved on. 151 at once, one every 694 days.
        let far = 9_300_000_000_000_000_000u64;
        c.call(&["SET", "cell:far", &far.to_string(), "PXAT", &(far / 1_000_000).to_string()]);
        let reply = fields(&throttle(&mut c, &["cell:far", "150", "1", "60000000"]));
        assert_eq!(reply[..2], [0, 151], "{reply:?}");
        assert_eq!(tat(&mut c, "cell:far"), far + 60_000_000_000_000_000);
        assert_eq!(
            c.call(&["PEXPIRETIME", "cell:far"]).int(),
            ((far + 60_000_000_000_000_000) / 1_000_000) as i64
        );

        // The largest TAT: refused, and left as it is.
        c.call(&["SET", "cell:max", &u64::MAX.to_string()]);
        let reply = fields(&throttle(&mut c, &["cell:max", "150", "1", "60000000"]));
        assert_eq!(reply[..3], [1, 151, 0], "{reply:?}");
        assert_eq!(tat(&mut c, "cell:max"), u64::MAX);
    }

    /// From Goblin to redis-cell: what Goblin stores is what redis-cell writes and reads, a
    /// u64's digits in nanoseconds, moved by redis-cell's interval to the nanosecond (3 a second
    /// is 333,333,333 ns a token, truncated) and expiring at the TAT floored to the millisecond.
    fn a_tat_goblin_writes_is_one_redis_cell_reads(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        // 3 per 100 s: 33,333,333,333.3 ns a token, truncated.
        let interval = 33_333_333_333u64;
        let t0 = server_ms(&mut c);
        assert_eq!(fields(&throttle(&mut c, &["cell:k", "9", "3", "100"])), [0, 10, 9, -1, 34]);
        let t1 = server_ms(&mut c);
        let first = tat(&mut c, "cell:k");
        assert_eq!(first % 1_000_000, interval % 1_000_000, "{first}");
        let instant = (first - interval) / 1_000_000;
        assert!((t0 as u64..=t1 as u64).contains(&instant), "{first} from a time in [{t0}, {t1}]");
        for step in 1..=4u64 {
            throttle(&mut c, &["cell:k", "9", "3", "100", "2"]);
            assert_eq!(tat(&mut c, "cell:k"), first + step * 2 * interval);
        }
        let last = tat(&mut c, "cell:k");
        assert_eq!(c.call(&["GET", "cell:k"]).text(), last.to_string(), "digits only");
        assert_eq!(c.call(&["PEXPIRETIME", "cell:k"]).int(), (last / 1_000_000) as i64);
        assert_eq!(c.call(&["TYPE", "cell:k"]), Reply::Status("string".into()));
    }

    /// What aborts redis-cell's server is an error here, and writes nothing: an argument that
    /// is not UTF-8, the key's name included.
    fn arguments_that_are_not_utf8_are_refused(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        throttle(&mut c, &["cell:k", "5", "1", "60"]);
        let good: [&[u8]; 6] = [b"CL.THROTTLE", b"cell:k", b"5", b"1", b"60", b"1"];
        for at in 1..good.len() {
            let mut call: Vec<Vec<u8>> = good.iter().map(|a| a.to_vec()).collect();
            call[at].extend_from_slice(b"\xff");
            let key = String::from_utf8_lossy(&call[1]).into_owned();
            let before = snapshot(&mut c, &call[1]);
            let dirty_before = dirty(&mut c);
            assert_eq!(c.call(&call), Reply::Error(CL_THROTTLE_NOT_UTF8.into()), "{key} {at}");
            assert_eq!(snapshot(&mut c, &call[1]), before);
            assert_eq!(dirty(&mut c), dirty_before, "wrote or propagated something");
        }
    }

}

on_every_server! {
    /// `COMMAND INFO`, `COMMAND DOCS`, the ACL categories, `INFO goblin` and the events, as
    /// the page says.
    fn the_surface(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let info = c.call(&["COMMAND", "INFO", "cl.throttle"]).array()[0].array().to_vec();
        assert_eq!(info[0], bulk("cl.throttle"));
        assert_eq!(info[1], Reply::Int(-5));
        assert_eq!(info[2].texts(), ["write", "denyoom", "module", "fast"]);
        assert_eq!(info[3..6], [Reply::Int(1), Reply::Int(1), Reply::Int(1)]);
        if flavor.has_module_acl_categories() {
            assert_eq!(info[6].texts(), ["@write", "@string", "@fast"]);
        }
        // One key spec, whole: the key at position 1, read and updated. It is the one the
        // server derives for redis-cell's registration (first key 1, last 1, step 1), so a
        // client that routes or checks ACLs by key specs finds the same key either way.
        let specs = info[8].array();
        assert_eq!(specs.len(), 1, "{specs:?}");
        assert_eq!(
            words(&specs[0]),
            [
                "flags", "RW", "access", "update",
                "begin_search", "type", "index", "spec", "index", "1",
                "find_keys", "type", "range", "spec", "lastkey", "0", "keystep", "1", "limit", "0",
            ],
        );
        for call in [&["cell:k", "15", "30", "60"][..], &["cell:k", "15", "30", "60", "2"]] {
            let mut getkeys = vec!["COMMAND", "GETKEYSANDFLAGS", "CL.THROTTLE"];
            getkeys.extend_from_slice(call);
            assert_eq!(
                words(&c.call(&getkeys)),
                ["cell:k", "RW", "access", "update"],
                "{call:?}"
            );
        }
        if flavor.version() >= (7, 2) || flavor.family() == Family::Valkey {
            let docs = c.call(&["COMMAND", "DOCS", "cl.throttle"]);
            let fields = docs.array()[1].array();
            let field = |name: &str| {
                fields
                    .chunks(2)
                    .find(|pair| pair[0].text() == name)
                    .map(|pair| pair[1].clone())
                    .unwrap_or_else(|| panic!("COMMAND DOCS has no {name}"))
            };
            assert!(field("summary").text().contains("redis-cell"));
            let names: Vec<String> = field("arguments")
                .array()
                .iter()
                .map(|arg| arg.array()[1].text())
                .collect();
            assert_eq!(names, ["key", "max-burst", "count-per-period", "period", "quantity"]);
        }
        throttle(&mut c, &["cell:k", "0", "1", "60"]);
        throttle(&mut c, &["cell:k", "0", "1", "60"]);
        throttle(&mut c, &["cell:k", "0", "1", "60", "x"]);
        let field = |c: &mut Conn, name: &str| info_field(c, "goblin", &format!("goblin_stand_in_cl_throttle_{name}"));
        assert_eq!(
            ["calls", "errors", "allowed", "limited"].map(|name| field(&mut c, name)),
            ["3", "1", "1", "1"]
        );
        c.call(&["CONFIG", "SET", "notify-keyspace-events", "KEAn"]);
        let events = keyspace_events(&server, &mut c, |c| {
            throttle(c, &["cell:e", "1", "1", "60"]);
            throttle(c, &["cell:e", "1", "1", "60"]);
            // Refused, and an error: no event.
            throttle(c, &["cell:e", "1", "1", "60"]);
            throttle(c, &["cell:e", "1", "1", "0"]);
        });
        assert_eq!(
            events,
            ["new cell:e", "cl.throttle cell:e", "expire cell:e", "cl.throttle cell:e", "expire cell:e"]
        );
    }

    /// With `no-stand-ins`, the module registers none, CL.THROTTLE included.
    fn no_stand_ins_registers_no_cl_throttle(flavor: Flavor) {
        let server = Server::builder(flavor).module_args(["no-stand-ins"]).start();
        let mut c = server.conn();
        assert_eq!(c.call(&["COMMAND", "INFO", "cl.throttle"]).array(), [Reply::Nil]);
        assert!(throttle(&mut c, &["k", "1", "1", "1"]).is_error());
    }

    /// Replicas and the AOF get `SET key tat PXAT ms`: a replica without the module holds the
    /// same TATs and expiries, and so does a server without it restarted from the AOF.
    fn replicas_and_the_aof_keep_every_tat_and_expiry(flavor: Flavor) {
        let servers = PersistedPair::start(flavor, "cell-aof");
        let mut p = servers.primary.conn();
        let mut rng = Rng::new(0xce11);
        let (mut allowed, mut limited) = (0, 0);
        for _ in 0..400 {
            let key = format!("k{}", rng.below(40));
            let quantity = (1 + rng.below(3)).to_string();
            let reply = fields(&throttle(&mut p, &[&key, "20", "2", "60", &quantity]));
            if reply[0] == 0 { allowed += 1 } else { limited += 1 }
        }
        assert!(allowed > 200 && limited > 10, "allowed {allowed}, limited {limited}");
        drop(p);
        let (on_primary, aof) = servers.check("k*");
        assert_eq!(on_primary.len(), 40);
        assert!(!aof.to_ascii_lowercase().contains("throttle"), "the AOF names CL.THROTTLE");
        let sets = aof_commands(&aof).into_iter().filter(|c| c[0] == "SET").count();
        assert_eq!(sets, allowed, "one SET in the AOF per allowed call");
    }

    /// A TAT under a millisecond ahead expires in its call's own millisecond (its expiry is the
    /// TAT floored), and is stored all the same, as redis-cell stores it
    /// (`RedisModule_SetExpire(key, 0)`: now): the next command of that millisecond reads it.
    /// Replicas and the AOF get it as every TAT, `SET key tat PXAT ms`, and keep it though it
    /// is already due when it arrives (a replica, and a server loading its AOF, never drop a
    /// write as expired: they wait for the primary's DEL). The primary's active expiry is off
    /// here, so no DEL comes: the replica, and a server without the module that loads the AOF,
    /// hold every key the primary holds.
    fn tats_ending_in_their_millisecond_reach_replicas_and_the_aof(flavor: Flavor) {
        let dir = TempDir::new("cell-ending");
        let server = Server::builder(flavor)
            .dir(&dir.0)
            .args(AOF_ALWAYS)
            .args(["--enable-debug-command", "yes"])
            .start();
        let mut c = server.conn();
        assert_eq!(c.call(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), Reply::Status("OK".into()));
        // 2,000 a second: half a millisecond a token. Quantity 0 stores the TAT it reads, or now.
        let mut stored: Vec<[String; 5]> = Vec::new();
        let mut ending = 0;
        for i in 0..120 {
            let key = format!("end:{}", i % 6);
            let quantity = ["0", "1", "1", "2"][(i + i / 6) % 4];
            c.call(&["MULTI"]);
            throttle(&mut c, &[&key, "9", "2000", "1", quantity]);
            c.call(&["GET", &key]);
            c.call(&["PEXPIRETIME", &key]);
            c.call(&["PTTL", &key]);
            let replies = c.call(&["EXEC"]).array().to_vec();
            if fields(&replies[0])[0] == 1 {
                continue;
            }
            // Read in the call's own instant: there, even a TAT that ends in it.
            let tat = replies[1].text();
            let at = replies[2].int();
            assert_eq!(at, (tat.parse::<u64>().expect("a TAT") / 1_000_000) as i64, "{key}: {tat}");
            if replies[3] == Reply::Int(0) {
                ending += 1;
            }
            stored.push(["SET".into(), key, tat, "PXAT".into(), at.to_string()]);
        }
        assert!(ending >= 20, "only {ending} TATs ending in their millisecond");
        assert_eq!(c.call(&["WAIT", "1", "10000"]), Reply::Int(1));

        // The stream, exactly: one SET per TAT stored, in order, and nothing that names the
        // command.
        let aof = aof_text(&dir.0);
        assert!(!aof.to_ascii_lowercase().contains("throttle"), "the AOF names CL.THROTTLE");
        let sets: Vec<Vec<String>> = aof_commands(&aof).into_iter().filter(|c| c[0] == "SET").collect();
        assert_eq!(sets, stored);

        // Every key is due by now; none was deleted on the primary, so none may be missing on
        // the replica (DBSIZE counts a key until it is deleted, due or not).
        let replica = server.replica().expect("replica mode");
        assert_eq!(c.call(&["DBSIZE"]), Reply::Int(6));
        assert_eq!(replica.conn().call(&["DBSIZE"]), Reply::Int(6), "the replica");

        // A server without the module loads the AOF, and keeps them too. It is a replica (of a
        // port where nothing listens): a replica never expires keys itself, so nothing deletes
        // them between its load and this read.
        let copy = TempDir::new("cell-ending-aof");
        std::fs::create_dir(copy.0.join("appendonlydir")).expect("appendonlydir");
        for file in std::fs::read_dir(dir.0.join("appendonlydir")).expect("the AOF") {
            let file = file.expect("a file of the AOF").path();
            let name = file.file_name().expect("a name");
            std::fs::copy(&file, copy.0.join("appendonlydir").join(name)).expect("copy");
        }
        let loaded = Server::builder(flavor)
            .without_module()
            .without_replica()
            .dir(&copy.0)
            .args(AOF_ALWAYS)
            .args(["--replicaof", "127.0.0.1", &free_port().to_string()])
            .start();
        assert_eq!(loaded.conn().call(&["DBSIZE"]), Reply::Int(6), "loaded from the AOF");
    }
}

on_servers_with! {
    snapshot,
    "Redis 7.0 has no command-time snapshot: each call in a MULTI reads the wall clock",
    /// One instant for a whole MULTI: calls queued together meet the same clock, so their
    /// replies follow from each other exactly.
    fn calls_in_one_multi_meet_one_instant(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["MULTI"]);
        for _ in 0..4 {
            throttle(&mut c, &["cell:m", "2", "2000", "1"]);
        }
        let replies: Vec<Vec<i64>> = c.call(&["EXEC"]).array().iter().map(fields).collect();
        // Half a millisecond a token: 0 s, 1 ms (1 s), 1.5 ms (1 s), then refused.
        assert_eq!(
            replies,
            [vec![0, 3, 2, -1, 0], vec![0, 3, 1, -1, 1], vec![0, 3, 0, -1, 1], vec![1, 3, 0, 0, 1]]
        );
    }
}
