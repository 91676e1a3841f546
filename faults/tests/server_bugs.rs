//! A server's own bug that the nemesis must step around, pinned on the servers themselves so
//! that the step is taken for a reason and dropped when the reason goes.
//!
//! CLIENT UNBLOCK reaching a client that CLIENT PAUSE holds (a command that came in during the
//! pause) is refused by every server but Redis 7.0, Goblin loaded or not. Redis 7.0, with
//! TIMEOUT, crashes ("Unknown btype in replyToBlockedClientTimedOut()"); with ERROR, it replies
//! `-UNBLOCKED` and then runs the command all the same when the pause ends: two replies to one
//! call, and its write made. The 30-minute campaign met the crash once (a worker's blocking
//! acquire, sent as a WRITE pause ended, still held when the nemesis unblocked it), and a
//! campaign of pauses and unblocks alone meets both within a minute: the second as a phantom
//! holder, a BZWINDOW answered `-UNBLOCKED` whose lease was granted after. The nemesis now
//! unblocks only where `no_pause_in_force` says the server holds no client.

use std::time::Duration;

use goblin_faults::nemesis::no_pause_in_force;
use goblin_faults::procs::wait_for;
use goblin_faults::wire::{cmd, Client, Reply, ReplyExt};
use goblin_testkit::{on_every_server, Flavor, Server};

fn addr(server: &Server) -> std::net::SocketAddr {
    std::net::SocketAddr::from(([127, 0, 0, 1], server.port))
}

/// A client whose SET the pause holds, and its id.
fn held_client(server: &Server) -> (Client, i64) {
    let mut client = Client::connect(addr(server), Duration::from_secs(2)).expect("connect");
    let id = client.identify().expect("CLIENT ID");
    client.send(&[cmd(&["SET", "k", "v"])]).expect("send SET");
    (client, id)
}

/// A server without Goblin, a pause of `how` for 20 s, a client whose SET it holds, and
/// `CLIENT UNBLOCK id mode`'s reply (an error: the server is gone).
fn unblock_held(flavor: Flavor, mode: &str) -> (Server, Client, Client, std::io::Result<Reply>) {
    let server = Server::builder(flavor)
        .without_module()
        .without_replica()
        .start();
    let mut admin = Client::connect(addr(&server), Duration::from_secs(2)).expect("connect");
    assert!(
        no_pause_in_force(addr(&server), Duration::from_secs(2)),
        "no pause yet"
    );
    admin
        .call(
            &cmd(&["CLIENT", "PAUSE", "20000", "WRITE"]),
            Duration::from_secs(2),
        )
        .expect("PAUSE");
    let (held, id) = held_client(&server);
    assert!(
        !no_pause_in_force(addr(&server), Duration::from_millis(300)),
        "{flavor:?}: the probe was answered during a WRITE pause"
    );
    let unblocked = admin.call(
        &cmd(&["CLIENT", "UNBLOCK", &id.to_string(), mode]),
        Duration::from_secs(2),
    );
    (server, admin, held, unblocked)
}

/// The pause lifted: the held SET answers once, `OK`, and the probe is answered.
fn unpause_and_see_one_reply(server: &Server, admin: &mut Client, held: &mut Client) -> Vec<Reply> {
    admin
        .call(&cmd(&["CLIENT", "UNPAUSE"]), Duration::from_secs(2))
        .expect("UNPAUSE");
    let (replies, _) = held.drain(Duration::from_millis(500));
    assert!(
        no_pause_in_force(addr(server), Duration::from_secs(2)),
        "{:?}: the probe after UNPAUSE",
        server.flavor
    );
    replies
}

on_every_server! {
    fn unblocking_a_held_client_with_error_is_refused_but_on_redis_70(flavor: Flavor) {
        let (server, mut admin, mut held, unblocked) = unblock_held(flavor, "ERROR");
        let replies = unpause_and_see_one_reply(&server, &mut admin, &mut held);
        let written = admin.call(&cmd(&["EXISTS", "k"]), Duration::from_secs(2)).ok().and_then(|r| r.as_int());
        if flavor == Flavor::Redis70 {
            assert_eq!(unblocked.ok().and_then(|r| r.as_int()), Some(1), "Redis 7.0 unblocked it");
            assert_eq!(
                format!("{replies:?}"),
                "[Error(\"UNBLOCKED client unblocked via CLIENT UNBLOCK\"), Status(\"OK\")]",
                "Redis 7.0: an error, and the command run after all"
            );
            assert_eq!(written, Some(1), "Redis 7.0 made the write it answered with an error");
            return;
        }
        assert_eq!(unblocked.ok().and_then(|r| r.as_int()), Some(0), "{flavor:?}: CLIENT UNBLOCK ERROR of a held client");
        assert_eq!(format!("{replies:?}"), "[Status(\"OK\")]", "{flavor:?}: the held SET's one reply");
        assert_eq!(written, Some(1));
    }

    fn unblocking_a_held_client_with_timeout_is_refused_but_crashes_redis_70(flavor: Flavor) {
        let (mut server, mut admin, mut held, unblocked) = unblock_held(flavor, "TIMEOUT");
        if flavor == Flavor::Redis70 {
            assert!(unblocked.is_err(), "Redis 7.0 answered CLIENT UNBLOCK of a held client: {unblocked:?}");
            let gone = wait_for(Duration::from_secs(10), || {
                Client::connect(addr(&server), Duration::from_millis(200)).err()
            });
            assert!(gone.is_some(), "Redis 7.0 still runs");
            assert!(
                server.log().contains("Unknown btype in replyToBlockedClientTimedOut()"),
                "Redis 7.0 died of something else:\n{}",
                server.log()
            );
            // Reaped here, as expected: the server's own bug, the reason for the probe.
            server.kill();
            return;
        }
        assert_eq!(unblocked.ok().and_then(|r| r.as_int()), Some(0), "{flavor:?}: CLIENT UNBLOCK TIMEOUT of a held client");
        let replies = unpause_and_see_one_reply(&server, &mut admin, &mut held);
        assert_eq!(format!("{replies:?}"), "[Status(\"OK\")]", "{flavor:?}: the held SET's one reply");
    }
}
