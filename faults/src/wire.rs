//! The campaign's client: RESP2 over a TCP connection to any address (a server in a network
//! namespace is not on loopback), with deadlines on every read, and every failure a value:
//! the server, the network and the nemesis decide what arrives, never this process.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

pub use goblin_testkit::Reply;

/// One command: its words.
pub type Command = Vec<Vec<u8>>;

/// A command from words.
pub fn cmd<A: AsRef<[u8]>>(words: &[A]) -> Command {
    words.iter().map(|word| word.as_ref().to_vec()).collect()
}

/// Why a pipeline did not come back whole: the replies that did come, in order, and what
/// happened to the rest.
#[derive(Debug)]
pub struct Broken {
    pub replies: Vec<Reply>,
    pub error: io::Error,
}

pub struct Client {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
    pub addr: SocketAddr,
    /// `CLIENT ID`, once asked (`identify`).
    pub id: Option<i64>,
}

impl Client {
    pub fn connect(addr: SocketAddr, within: Duration) -> io::Result<Client> {
        let stream = TcpStream::connect_timeout(&addr, within)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(within))?;
        stream.set_write_timeout(Some(Duration::from_secs(5)))?;
        Ok(Client {
            reader: BufReader::new(stream.try_clone()?),
            stream,
            addr,
            id: None,
        })
    }

    /// A handle on the same socket, for another thread to cut it (`half_close`, `cut`).
    pub fn handle(&self) -> io::Result<TcpStream> {
        self.stream.try_clone()
    }

    /// Asks the server for this connection's id.
    pub fn identify(&mut self) -> io::Result<i64> {
        match self.call(&cmd(&["CLIENT", "ID"]), Duration::from_secs(5))? {
            Reply::Int(id) => {
                self.id = Some(id);
                Ok(id)
            }
            other => Err(invalid(format!("CLIENT ID gave {other:?}"))),
        }
    }

    pub fn call(&mut self, command: &Command, within: Duration) -> io::Result<Reply> {
        match self.pipeline(std::slice::from_ref(command), within) {
            Ok(mut replies) => replies.pop().ok_or_else(|| invalid("no reply".into())),
            Err(broken) => Err(broken.error),
        }
    }

    /// Sends the commands in one write and reads their replies, each within `within` of the
    /// one before.
    pub fn pipeline(
        &mut self,
        commands: &[Command],
        within: Duration,
    ) -> Result<Vec<Reply>, Broken> {
        let mut out = Vec::new();
        for command in commands {
            goblin_testkit::resp::encode(command, &mut out);
        }
        if let Err(error) = self.stream.write_all(&out) {
            return Err(Broken {
                replies: Vec::new(),
                error,
            });
        }
        self.read_replies(commands.len(), within)
    }

    /// Sends without reading.
    pub fn send(&mut self, commands: &[Command]) -> io::Result<()> {
        let mut out = Vec::new();
        for command in commands {
            goblin_testkit::resp::encode(command, &mut out);
        }
        self.stream.write_all(&out)
    }

    pub fn read_replies(&mut self, count: usize, within: Duration) -> Result<Vec<Reply>, Broken> {
        let mut replies = Vec::with_capacity(count);
        for _ in 0..count {
            if let Err(error) = self
                .reader
                .get_ref()
                .set_read_timeout(Some(within.max(Duration::from_millis(1))))
            {
                return Err(Broken { replies, error });
            }
            match read_reply(&mut self.reader) {
                Ok(reply) => replies.push(reply),
                Err(error) => return Err(Broken { replies, error }),
            }
        }
        Ok(replies)
    }

    /// Closes the connection from this side as a client that gives up does: no more requests
    /// (FIN), then whatever the server still sends, until it closes too or `within` passes.
    /// The replies that came before the server's end: a reply sent before the server saw the
    /// close reaches us; one it never sent does not.
    pub fn half_close(&mut self, within: Duration) -> (Vec<Reply>, bool) {
        let _ = self.stream.shutdown(Shutdown::Write);
        self.drain(within)
    }

    /// Reads what the server still sends until it closes the connection (`true`) or `within`
    /// passes (`false`).
    pub fn drain(&mut self, within: Duration) -> (Vec<Reply>, bool) {
        let deadline = Instant::now() + within;
        let mut replies = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return (replies, false);
            }
            let _ = self.reader.get_ref().set_read_timeout(Some(left));
            match read_reply(&mut self.reader) {
                Ok(reply) => replies.push(reply),
                Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => {
                    return (replies, true)
                }
                Err(error) if is_timeout(&error) => return (replies, false),
                Err(_) => return (replies, true),
            }
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

pub fn is_timeout(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

fn read_line<R: BufRead>(reader: &mut R) -> io::Result<Vec<u8>> {
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed",
        ));
    }
    if line.len() < 3 || !line.ends_with(b"\r\n") {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "a reply cut short",
        ));
    }
    line.truncate(line.len() - 2);
    Ok(line)
}

fn number(body: &[u8]) -> io::Result<i64> {
    std::str::from_utf8(body)
        .ok()
        .and_then(|text| text.parse().ok())
        .ok_or_else(|| {
            invalid(format!(
                "{:?} is not a number",
                String::from_utf8_lossy(body)
            ))
        })
}

/// One RESP2 reply (and the RESP3 types, should a server send them), every malformation an
/// error, never a panic.
pub fn read_reply<R: BufRead>(reader: &mut R) -> io::Result<Reply> {
    let line = read_line(reader)?;
    let body = &line[1..];
    let text = || String::from_utf8_lossy(body).into_owned();
    Ok(match line[0] {
        b'+' => Reply::Status(text()),
        b'-' => Reply::Error(text()),
        b':' => Reply::Int(number(body)?),
        b'$' => {
            let len = number(body)?;
            if len < 0 {
                Reply::Nil
            } else {
                let mut data = vec![0; len as usize + 2];
                reader.read_exact(&mut data)?;
                data.truncate(len as usize);
                Reply::Bulk(data)
            }
        }
        b'*' | b'~' | b'>' => {
            let len = number(body)?;
            if len < 0 {
                Reply::Nil
            } else {
                let mut items = Vec::new();
                for _ in 0..len {
                    items.push(read_reply(reader)?);
                }
                match line[0] {
                    b'*' => Reply::Array(items),
                    b'~' => Reply::Set(items),
                    _ => Reply::Push(items),
                }
            }
        }
        b'_' => Reply::Null,
        b',' => Reply::Double(text()),
        b'#' => Reply::Bool(body == b"t"),
        other => return Err(invalid(format!("RESP type byte {other}"))),
    })
}

/// Reply helpers that never panic.
pub trait ReplyExt {
    fn as_int(&self) -> Option<i64>;
    fn as_bytes(&self) -> Option<&[u8]>;
    fn as_text(&self) -> Option<String>;
    fn items(&self) -> Option<&[Reply]>;
    fn error(&self) -> Option<&str>;
    fn ints(&self) -> Option<Vec<i64>>;
}

impl ReplyExt for Reply {
    fn as_int(&self) -> Option<i64> {
        match self {
            Reply::Int(n) => Some(*n),
            Reply::Bulk(bytes) => std::str::from_utf8(bytes).ok()?.parse().ok(),
            _ => None,
        }
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Reply::Bulk(bytes) => Some(bytes),
            Reply::Status(text) => Some(text.as_bytes()),
            _ => None,
        }
    }

    fn as_text(&self) -> Option<String> {
        self.as_bytes()
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
    }

    fn items(&self) -> Option<&[Reply]> {
        match self {
            Reply::Array(items) | Reply::Set(items) => Some(items),
            _ => None,
        }
    }

    fn error(&self) -> Option<&str> {
        match self {
            Reply::Error(text) => Some(text),
            _ => None,
        }
    }

    fn ints(&self) -> Option<Vec<i64>> {
        self.items()?.iter().map(ReplyExt::as_int).collect()
    }
}

/// A `TIME` reply in Unix microseconds.
pub fn time_us(reply: &Reply) -> Option<i64> {
    let items = reply.items()?;
    let seconds = items.first()?.as_int()?;
    let micros = items.get(1)?.as_int()?;
    Some(seconds * 1_000_000 + micros)
}

/// A reply as a report shows it, short.
pub fn brief(reply: &Reply) -> String {
    match reply {
        Reply::Bulk(bytes) => format!("{:?}", String::from_utf8_lossy(bytes)),
        Reply::Status(text) => text.clone(),
        Reply::Error(text) => format!("-{text}"),
        Reply::Int(n) => n.to_string(),
        Reply::Nil | Reply::Null => "nil".into(),
        Reply::Array(items) | Reply::Set(items) => {
            let shown: Vec<String> = items.iter().take(8).map(brief).collect();
            let more = if items.len() > 8 { ", ..." } else { "" };
            format!("[{}{more}]", shown.join(", "))
        }
        other => format!("{other:?}"),
    }
}

/// A command as a report shows it.
pub fn shown(command: &Command) -> String {
    command
        .iter()
        .map(|word| {
            let text = String::from_utf8_lossy(word);
            if word.iter().all(|b| b.is_ascii_graphic()) {
                text.into_owned()
            } else {
                format!("{text:?}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
