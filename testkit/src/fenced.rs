//! A resource that refuses stale fencing tokens, for the tests of Goblin's `FENCE`: a tiny
//! server on loopback, in the test's own process, that a lock holder in another process
//! writes to. It remembers the largest token it has accepted and refuses any write with a
//! smaller one, as a database row guarded by `WHERE fence <= :token` would.
//!
//! One request per line, `WRITE <token> <text>`, answered `OK`, or `STALE <largest>` for a
//! token below the largest accepted (anything else: `ERR`).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;

/// What the resource holds: every write it accepted and every one it refused, in order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Writes {
    pub accepted: Vec<(i64, String)>,
    pub refused: Vec<(i64, String)>,
}

impl Writes {
    /// The largest token accepted so far (0 before the first write).
    pub fn largest(&self) -> i64 {
        self.accepted
            .iter()
            .map(|&(token, _)| token)
            .max()
            .unwrap_or(0)
    }

    /// Applies one write: accepted unless `token` is below the largest accepted.
    pub fn write(&mut self, token: i64, text: &str) -> Result<(), i64> {
        let largest = self.largest();
        if token < largest {
            self.refused.push((token, text.to_string()));
            return Err(largest);
        }
        self.accepted.push((token, text.to_string()));
        Ok(())
    }
}

/// The resource, listening on `port` until dropped with the test.
pub struct FencedStore {
    pub port: u16,
    writes: Arc<Mutex<Writes>>,
}

impl FencedStore {
    pub fn start() -> FencedStore {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fenced store");
        let port = listener.local_addr().expect("its address").port();
        let writes = Arc::new(Mutex::new(Writes::default()));
        let shared = writes.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let writes = shared.clone();
                thread::spawn(move || serve(stream, &writes));
            }
        });
        FencedStore { port, writes }
    }

    /// A write from this process, as a holder in another would send it.
    pub fn write(&self, token: i64, text: &str) -> Result<(), i64> {
        lock(&self.writes).write(token, text)
    }

    /// Every write so far.
    pub fn writes(&self) -> Writes {
        lock(&self.writes).clone()
    }
}

fn lock(writes: &Mutex<Writes>) -> MutexGuard<'_, Writes> {
    writes
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn serve(stream: TcpStream, writes: &Mutex<Writes>) {
    let Ok(mut out) = stream.try_clone() else {
        return;
    };
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else {
            return;
        };
        let mut words = line.splitn(3, ' ');
        let answer = match (
            words.next(),
            words.next().map(str::parse::<i64>),
            words.next(),
        ) {
            (Some("WRITE"), Some(Ok(token)), Some(text)) => match lock(writes).write(token, text) {
                Ok(()) => "OK".to_string(),
                Err(largest) => format!("STALE {largest}"),
            },
            _ => "ERR".to_string(),
        };
        if writeln!(out, "{answer}").is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_smaller_token_is_refused_and_the_same_one_accepted() {
        let mut writes = Writes::default();
        assert_eq!(writes.write(5, "a"), Ok(()));
        assert_eq!(writes.write(5, "again"), Ok(()));
        assert_eq!(writes.write(9, "b"), Ok(()));
        assert_eq!(writes.write(7, "late"), Err(9));
        assert_eq!(writes.largest(), 9);
        assert_eq!(writes.refused, vec![(7, "late".to_string())]);
    }

    #[test]
    fn it_answers_over_loopback() {
        let store = FencedStore::start();
        let mut conn = TcpStream::connect(("127.0.0.1", store.port)).unwrap();
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        let mut ask = |line: &str| {
            writeln!(conn, "{line}").unwrap();
            let mut answer = String::new();
            reader.read_line(&mut answer).unwrap();
            answer.trim().to_string()
        };
        assert_eq!(ask("WRITE 10 first words"), "OK");
        assert_eq!(ask("WRITE 3 stale"), "STALE 10");
        assert_eq!(ask("nonsense"), "ERR");
        assert_eq!(
            store.writes().accepted,
            vec![(10, "first words".to_string())]
        );
    }
}
