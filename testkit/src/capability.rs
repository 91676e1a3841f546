//! What some tests need of a server beyond the module: a capability each server of the matrix
//! has or lacks, by its family and version (`testkit/build.rs`, whence `on_servers_with!`, which
//! runs such a test where the capability is and reports it ignored elsewhere), and the same asked
//! of a running server, so that the table can be held to the servers themselves.

use crate::{Conn, Flavor, Reply, Server};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// EXPIRE and the module's cached clock take their time from one command-time snapshot
    /// inside MULTI, a script or a function (Redis 7.2+, Valkey); Redis 7.0 reads its clock at
    /// each command.
    Snapshot,
    /// Atomic slot migration (`CLUSTER MIGRATESLOTS`, Valkey 9).
    AtomicSlotMigration,
}

impl Capability {
    pub const ALL: &'static [Capability] = &[Capability::Snapshot, Capability::AtomicSlotMigration];

    /// The name `on_servers_with!` takes.
    pub fn name(self) -> &'static str {
        match self {
            Capability::Snapshot => "snapshot",
            Capability::AtomicSlotMigration => "atomic_slot_migration",
        }
    }

    pub fn from_name(name: &str) -> Capability {
        Capability::ALL
            .iter()
            .copied()
            .find(|capability| capability.name() == name)
            .unwrap_or_else(|| panic!("no capability {name}"))
    }

    /// Whether the server `conn` is connected to has it, asked of the server itself.
    pub fn present(self, conn: &mut Conn) -> bool {
        match self {
            Capability::Snapshot => {
                // Two expiries set in one MULTI, 30,000 commands apart (milliseconds of work):
                // the same instant only where the transaction has one clock.
                let mut commands: Vec<Vec<&str>> = vec![
                    vec!["MULTI"],
                    vec!["SET", "capability:a", "v", "PX", "600000"],
                ];
                commands.extend((0..30_000).map(|_| vec!["PING"]));
                commands.push(vec!["SET", "capability:b", "v", "PX", "600000"]);
                commands.push(vec!["EXEC"]);
                conn.pipeline(&commands);
                let at = |conn: &mut Conn, key: &str| conn.call(&["PEXPIRETIME", key]).int();
                let same = at(conn, "capability:a") == at(conn, "capability:b");
                conn.call(&["DEL", "capability:a", "capability:b"]);
                same
            }
            Capability::AtomicSlotMigration => {
                match conn.call(&["COMMAND", "INFO", "cluster|migrateslots"]) {
                    Reply::Array(entries) => {
                        entries.first().is_some_and(|entry| *entry != Reply::Nil)
                    }
                    other => panic!("COMMAND INFO gave {other:?}"),
                }
            }
        }
    }
}

/// What a test `on_servers_with!` skips proves when it is run (`--ignored`): the server lacks
/// the capability.
pub fn assert_lacks(flavor: Flavor, capability: Capability) {
    assert!(
        !flavor.has(capability),
        "{flavor:?} has {capability:?} by the table"
    );
    let server = Server::builder(flavor).without_replica().start();
    assert!(
        !capability.present(&mut server.conn()),
        "{flavor:?} has {capability:?} after all"
    );
}
