//! A real cluster for the tests: three primaries with a replica each, all loading the module,
//! built with CLUSTER commands.

use goblin_testkit::*;
use redis::cluster::ClusterClient;
use std::time::Duration;

/// The nodes, by role at the start.
pub struct Cluster {
    pub primaries: Vec<Server>,
    pub replicas: Vec<Server>,
}

pub fn node_id(c: &mut Conn) -> String {
    c.call(&["CLUSTER", "MYID"]).text()
}

pub fn cluster_ok(c: &mut Conn, nodes: usize) -> bool {
    let info = c.call(&["CLUSTER", "INFO"]).text();
    info.contains("cluster_state:ok") && info.contains(&format!("cluster_known_nodes:{nodes}"))
}

impl Cluster {
    /// Three primaries with a replica each, every node loading the module.
    pub fn start(flavor: Flavor) -> Cluster {
        // Cluster nodes: the cluster has its own replicas, and a node cannot follow a plain one.
        let primaries: Vec<Server> = (0..3)
            .map(|_| Server::builder(flavor).cluster().without_replica().start())
            .collect();
        let replicas: Vec<Server> = (0..3)
            .map(|_| Server::builder(flavor).cluster().without_replica().start())
            .collect();
        let ranges = [("0", "5460"), ("5461", "10922"), ("10923", "16383")];
        for (server, (first, last)) in primaries.iter().zip(ranges) {
            let reply = server
                .conn()
                .call(&["CLUSTER", "ADDSLOTSRANGE", first, last]);
            assert_eq!(reply, Reply::Status("OK".into()));
        }
        let mut first = primaries[0].conn();
        for server in primaries.iter().chain(&replicas).skip(1) {
            first.call(&["CLUSTER", "MEET", "127.0.0.1", &server.port.to_string()]);
        }
        for server in primaries.iter().chain(&replicas) {
            let mut c = server.conn();
            assert!(
                wait_until(Duration::from_secs(30), || cluster_ok(&mut c, 6)),
                "cluster never formed"
            );
        }
        for (replica, primary) in replicas.iter().zip(&primaries) {
            let id = node_id(&mut primary.conn());
            let mut c = replica.conn();
            assert_eq!(
                c.call(&["CLUSTER", "REPLICATE", &id]),
                Reply::Status("OK".into())
            );
        }
        for replica in &replicas {
            let mut c = replica.conn();
            assert!(
                wait_until(Duration::from_secs(30), || info_field(
                    &mut c,
                    "replication",
                    "master_link_status"
                ) == "up"),
                "replica never synced"
            );
        }
        Cluster {
            primaries,
            replicas,
        }
    }

    /// A cluster client that follows redirections.
    pub fn client(&self) -> redis::cluster::ClusterConnection {
        let nodes: Vec<String> = self
            .primaries
            .iter()
            .map(|s| format!("redis://127.0.0.1:{}/", s.port))
            .collect();
        ClusterClient::builder(nodes)
            .retries(20)
            .build()
            .expect("cluster client")
            .get_connection()
            .expect("cluster connection")
    }
}
