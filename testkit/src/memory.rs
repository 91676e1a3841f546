//! What a server holds of its memory, read as its own reports say: `used_memory` once it has
//! settled, and whether it has trimmed its blocked clients' buffers, for the tests and the
//! benchmark that weigh a parked waiter (tests/waiting_load.rs, bench/src/bin/waiters.rs).

use std::time::Duration;

use crate::{info_field, wait_until, Conn, Server};

pub fn used_memory(c: &mut Conn) -> i64 {
    info_field(c, "memory", "used_memory")
        .parse()
        .expect("used_memory")
}

/// `used_memory` once the server has let go of every other client (a closed connection is
/// freed on the server's next turn, a busy machine's later) and two readings half a second
/// apart agree to the kilobyte.
pub fn settled_memory(c: &mut Conn) -> i64 {
    let mut last = used_memory(c);
    let settled = wait_until(Duration::from_secs(120), || {
        std::thread::sleep(Duration::from_millis(500));
        let now = used_memory(c);
        let alone = info_field(c, "clients", "connected_clients") == "1";
        let steady = (now - last).abs() < 1024;
        last = now;
        alone && steady
    });
    assert!(settled, "the server's memory never settled: {last}");
    last
}

/// A field of a `CLIENT LIST` or `CLIENT INFO` line (`qbuf=26 ...`), as a number.
pub fn client_field(line: &str, name: &str) -> i64 {
    line.split(' ')
        .find_map(|field| field.strip_prefix(name)?.strip_prefix('='))
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}

/// Whether the server has trimmed every blocked client's buffers, as it trims an idle client's
/// (its cron frees a query buffer idle for 2 s and shrinks a reply buffer to 1 KB once its peak
/// is reset): what `CLIENT LIST` says of each, not a guess of how long that takes.
pub fn blocked_clients_trimmed(c: &mut Conn) -> bool {
    let list = c.call(&["CLIENT", "LIST"]).text();
    list.lines()
        .filter(|line| line.split(' ').any(|field| field == "flags=b"))
        .all(|line| {
            client_field(line, "qbuf") == 0
                && client_field(line, "qbuf-free") == 0
                && client_field(line, "rbs") < 2048
        })
}

/// What the two clients cost that the server makes, without a connection, for every client a
/// module blocks (`RedisModule_BlockClient`'s reply client and thread-safe client): each what a
/// new connection's `tot-mem` says a client costs (its struct, its 16 KB reply buffer), less
/// its query buffer and its arguments, read by `CLIENT INFO` as its first command.
pub fn module_blocked_clients_bytes(server: &Server) -> i64 {
    let info = server.conn().call(&["CLIENT", "INFO"]).text();
    let one = client_field(&info, "tot-mem")
        - client_field(&info, "qbuf")
        - client_field(&info, "qbuf-free")
        - client_field(&info, "argv-mem");
    2 * one
}
