//! A minimal RESP2 and RESP3 client: exact error texts, binary-safe arguments, explicit
//! pipelining. Tests need to see precisely what the server said, so nothing here interprets
//! replies: a RESP3 double keeps the exact text the server sent, a verbatim string its format.
//!
//! A connection speaks RESP2 until it sends `HELLO 3` (see [`Conn::hello3`]). RESP2's null
//! bulk string (`$-1`) and null array (`*-1`) are [`Reply::Nil`]; RESP3's null (`_`) is
//! [`Reply::Null`]. Attributes (`|`) are read and skipped: the reply is the one that follows.

use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Int(i64),
    Bulk(Vec<u8>),
    /// RESP2's null bulk string and null array.
    Nil,
    Status(String),
    /// A simple error, or a RESP3 blob error (`!`): the same text either way.
    Error(String),
    Array(Vec<Reply>),
    /// RESP3 `_`.
    Null,
    /// RESP3 `,`: the text exactly as the server sent it (`1.5`, `inf`, `-nan`, ...).
    Double(String),
    /// RESP3 `#t` / `#f`.
    Bool(bool),
    /// RESP3 `(`: the digits as sent.
    BigNumber(String),
    /// RESP3 `=`: the 3-byte format (`txt`, `mkd`) and the payload after `fmt:`.
    Verbatim {
        format: String,
        text: Vec<u8>,
    },
    /// RESP3 `%`: the pairs in the order sent.
    Map(Vec<(Reply, Reply)>),
    /// RESP3 `~`: the members in the order sent.
    Set(Vec<Reply>),
    /// RESP3 `>`: out-of-band data (pub/sub messages, invalidations).
    Push(Vec<Reply>),
}

impl Reply {
    pub fn int(&self) -> i64 {
        match self {
            Reply::Int(n) => *n,
            other => panic!("expected an integer, got {other:?}"),
        }
    }

    pub fn status(&self) -> String {
        match self {
            Reply::Status(s) => s.clone(),
            other => panic!("expected a status, got {other:?}"),
        }
    }

    /// A bulk, status or verbatim reply as text.
    pub fn text(&self) -> String {
        match self {
            Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            Reply::Status(s) => s.clone(),
            Reply::Verbatim { text, .. } => String::from_utf8_lossy(text).into_owned(),
            other => panic!("expected text, got {other:?}"),
        }
    }

    pub fn array(&self) -> &[Reply] {
        match self {
            Reply::Array(items) => items,
            other => panic!("expected an array, got {other:?}"),
        }
    }

    pub fn map(&self) -> &[(Reply, Reply)] {
        match self {
            Reply::Map(pairs) => pairs,
            other => panic!("expected a map, got {other:?}"),
        }
    }

    /// The value of the map entry whose key is the bulk or status text `key`.
    pub fn get(&self, key: &str) -> Option<&Reply> {
        self.map().iter().find_map(|(k, v)| {
            matches!(k, Reply::Bulk(_) | Reply::Status(_))
                .then(|| k.text())
                .filter(|k| k == key)
                .map(|_| v)
        })
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }

    /// Bulk strings of an array, as text.
    pub fn texts(&self) -> Vec<String> {
        self.array().iter().map(Reply::text).collect()
    }
}

pub struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

pub fn encode<A: AsRef<[u8]>>(args: &[A], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for arg in args {
        let arg = arg.as_ref();
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// Reads `len` bytes and the CRLF that ends them.
fn read_blob<R: BufRead>(reader: &mut R, len: usize) -> io::Result<Vec<u8>> {
    let mut data = vec![0; len + 2];
    reader.read_exact(&mut data)?;
    if &data[len..] != b"\r\n" {
        return Err(invalid(format!("a blob of {len} bytes without its CRLF")));
    }
    data.truncate(len);
    Ok(data)
}

fn read_items<R: BufRead>(reader: &mut R, len: i64) -> io::Result<Vec<Reply>> {
    let mut items = Vec::with_capacity(len.max(0) as usize);
    for _ in 0..len {
        items.push(read_reply(reader)?);
    }
    Ok(items)
}

fn read_pairs<R: BufRead>(reader: &mut R, len: i64) -> io::Result<Vec<(Reply, Reply)>> {
    let mut pairs = Vec::with_capacity(len.max(0) as usize);
    for _ in 0..len {
        let key = read_reply(reader)?;
        pairs.push((key, read_reply(reader)?));
    }
    Ok(pairs)
}

/// Reads one reply, RESP2 or RESP3, from any buffered reader.
pub fn read_reply<R: BufRead>(reader: &mut R) -> io::Result<Reply> {
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line)?;
    if line.len() < 3 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed",
        ));
    }
    if !line.ends_with(b"\r\n") {
        return Err(invalid(format!(
            "a line without its CRLF: {:?}",
            String::from_utf8_lossy(&line)
        )));
    }
    let body = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
    let length = |what: &str| -> io::Result<i64> {
        body.parse()
            .map_err(|_| invalid(format!("{what} {body:?} is not a length")))
    };
    // Blobs and aggregates of RESP3's own types have no null form: a length is never negative.
    let size = |what: &str| -> io::Result<i64> {
        length(what).and_then(|len| {
            if len < 0 {
                Err(invalid(format!("{what} {len}")))
            } else {
                Ok(len)
            }
        })
    };
    Ok(match line[0] {
        b'+' => Reply::Status(body),
        b'-' => Reply::Error(body),
        b':' => Reply::Int(body.parse().expect("integer reply")),
        b'$' => {
            let len = length("bulk length")?;
            if len < 0 {
                Reply::Nil
            } else {
                Reply::Bulk(read_blob(reader, len as usize)?)
            }
        }
        b'*' => {
            let len = length("array length")?;
            if len < 0 {
                Reply::Nil
            } else {
                Reply::Array(read_items(reader, len)?)
            }
        }
        b'_' if body.is_empty() => Reply::Null,
        b'_' => return Err(invalid(format!("a null with a body: {body:?}"))),
        b',' => Reply::Double(body),
        b'#' => match body.as_str() {
            "t" => Reply::Bool(true),
            "f" => Reply::Bool(false),
            other => return Err(invalid(format!("boolean {other:?}"))),
        },
        b'(' => Reply::BigNumber(body),
        b'!' => {
            let blob = read_blob(reader, size("blob error length")? as usize)?;
            Reply::Error(String::from_utf8_lossy(&blob).into_owned())
        }
        b'=' => {
            let blob = read_blob(reader, size("verbatim length")? as usize)?;
            if blob.len() < 4 || blob[3] != b':' {
                return Err(invalid(format!(
                    "verbatim string without a format: {:?}",
                    String::from_utf8_lossy(&blob)
                )));
            }
            Reply::Verbatim {
                format: String::from_utf8_lossy(&blob[..3]).into_owned(),
                text: blob[4..].to_vec(),
            }
        }
        b'%' => Reply::Map(read_pairs(reader, size("map length")?)?),
        b'~' => Reply::Set(read_items(reader, size("set length")?)?),
        b'>' => Reply::Push(read_items(reader, size("push length")?)?),
        b'|' => {
            // Attributes describe the reply that follows; nothing here needs them.
            read_pairs(reader, size("attribute length")?)?;
            read_reply(reader)?
        }
        other => panic!("unexpected RESP type byte {other}"),
    })
}

/// Parses exactly one reply from `bytes`; an error if anything is left over or missing.
pub fn parse(bytes: &[u8]) -> io::Result<Reply> {
    let mut reader = bytes;
    let reply = read_reply(&mut reader)?;
    if !reader.is_empty() {
        return Err(invalid(format!("{} bytes after the reply", reader.len())));
    }
    Ok(reply)
}

impl Conn {
    pub fn connect(port: u16) -> io::Result<Conn> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(60)))?;
        Ok(Conn {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    /// The port of the server this connection talks to: for another client of the same server.
    pub fn port(&self) -> u16 {
        self.writer
            .peer_addr()
            .expect("a connected socket has a peer")
            .port()
    }

    /// The port of this connection's own end: how the server's side of it is found
    /// (`Server::until_unread`, `Server::until_closed`).
    pub fn local_port(&self) -> u16 {
        self.writer
            .local_addr()
            .expect("a connected socket has an address")
            .port()
    }

    /// Sends one command and reads its reply.
    pub fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Reply {
        let shown = || {
            let words: Vec<String> = args
                .iter()
                .map(|a| String::from_utf8_lossy(a.as_ref()).into_owned())
                .collect();
            words.join(" ")
        };
        if let Err(e) = self.send(args) {
            panic!("sending {}: {e}", shown());
        }
        self.read()
            .unwrap_or_else(|e| panic!("reading the reply to {}: {e}", shown()))
    }

    /// Switches the connection to RESP3 with `HELLO 3`, and returns the server's map reply.
    pub fn hello3(&mut self) -> Reply {
        let reply = self.call(&["HELLO", "3"]);
        assert!(matches!(reply, Reply::Map(_)), "HELLO 3 gave {reply:?}");
        reply
    }

    /// Sends without reading (for SHUTDOWN, or pipelines).
    pub fn send<A: AsRef<[u8]>>(&mut self, args: &[A]) -> io::Result<()> {
        let mut out = Vec::new();
        encode(args, &mut out);
        self.writer.write_all(&out)
    }

    /// Sends all commands in one write, then reads all replies.
    pub fn pipeline<A: AsRef<[u8]>>(&mut self, commands: &[Vec<A>]) -> Vec<Reply> {
        let mut out = Vec::new();
        for args in commands {
            encode(args, &mut out);
        }
        self.writer.write_all(&out).expect("send pipeline");
        commands
            .iter()
            .map(|_| self.read().expect("read reply"))
            .collect()
    }

    pub fn read(&mut self) -> io::Result<Reply> {
        read_reply(&mut self.reader)
    }

    /// The next reply if one comes within `within`, `None` if none does (a client still
    /// blocked). The connection is whole afterwards either way: a reply is read whole or not
    /// at all, as long as its first byte has not come.
    pub fn reply_within(&mut self, within: Duration) -> Option<Reply> {
        let stream = self.reader.get_ref();
        stream.set_read_timeout(Some(within)).expect("read timeout");
        let ready = match self.reader.fill_buf() {
            Ok(bytes) => !bytes.is_empty(),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                false
            }
            Err(e) => panic!("reading a reply: {e}"),
        };
        let stream = self.reader.get_ref();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .expect("read timeout");
        ready.then(|| self.read().expect("a whole reply"))
    }
}

impl Conn {
    /// Writes bytes already encoded as RESP (see `encode`): for load generators that build a
    /// pipeline once and send it whole.
    pub fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writer.write_all(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(text.as_bytes().to_vec())
    }

    fn ok(bytes: &[u8]) -> Reply {
        parse(bytes).unwrap_or_else(|e| panic!("{:?}: {e}", String::from_utf8_lossy(bytes)))
    }

    fn fails(bytes: &[u8]) -> io::Error {
        match parse(bytes) {
            Ok(reply) => panic!("{:?} parsed as {reply:?}", String::from_utf8_lossy(bytes)),
            Err(e) => e,
        }
    }

    #[test]
    fn resp2_replies_are_as_before() {
        assert_eq!(ok(b"+OK\r\n"), Reply::Status("OK".into()));
        assert_eq!(ok(b"-ERR no\r\n"), Reply::Error("ERR no".into()));
        assert_eq!(ok(b":42\r\n"), Reply::Int(42));
        assert_eq!(ok(b":-9223372036854775808\r\n"), Reply::Int(i64::MIN));
        assert_eq!(ok(b"$3\r\nabc\r\n"), bulk("abc"));
        assert_eq!(ok(b"$0\r\n\r\n"), bulk(""));
        assert_eq!(
            ok(b"$6\r\n\x00\xff\r\nab\r\n"),
            Reply::Bulk(b"\x00\xff\r\nab".to_vec())
        );
        assert_eq!(ok(b"$-1\r\n"), Reply::Nil);
        assert_eq!(ok(b"*-1\r\n"), Reply::Nil);
        assert_eq!(ok(b"*0\r\n"), Reply::Array(vec![]));
        assert_eq!(
            ok(b"*3\r\n:1\r\n*2\r\n$1\r\na\r\n$-1\r\n-ERR x\r\n"),
            Reply::Array(vec![
                Reply::Int(1),
                Reply::Array(vec![bulk("a"), Reply::Nil]),
                Reply::Error("ERR x".into()),
            ])
        );
    }

    #[test]
    fn resp3_scalars() {
        assert_eq!(ok(b"_\r\n"), Reply::Null);
        assert_eq!(ok(b",1.5\r\n"), Reply::Double("1.5".into()));
        // The exact text: no rounding, no normalisation.
        assert_eq!(
            ok(b",1700000000.1234567\r\n"),
            Reply::Double("1700000000.1234567".into())
        );
        assert_eq!(ok(b",inf\r\n"), Reply::Double("inf".into()));
        assert_eq!(ok(b",-inf\r\n"), Reply::Double("-inf".into()));
        assert_eq!(ok(b",nan\r\n"), Reply::Double("nan".into()));
        assert_eq!(ok(b",1e+300\r\n"), Reply::Double("1e+300".into()));
        assert_eq!(ok(b"#t\r\n"), Reply::Bool(true));
        assert_eq!(ok(b"#f\r\n"), Reply::Bool(false));
        assert_eq!(
            ok(b"(3492890328409238509324850943850943825024385\r\n"),
            Reply::BigNumber("3492890328409238509324850943850943825024385".into())
        );
        assert_eq!(ok(b"(-1\r\n"), Reply::BigNumber("-1".into()));
        assert_eq!(
            ok(b"!21\r\nSYNTAX invalid syntax\r\n"),
            Reply::Error("SYNTAX invalid syntax".into())
        );
        let verbatim = ok(b"=15\r\ntxt:Some string\r\n");
        assert_eq!(
            verbatim,
            Reply::Verbatim {
                format: "txt".into(),
                text: b"Some string".to_vec()
            }
        );
        assert_eq!(verbatim.text(), "Some string");
        assert_eq!(
            ok(b"=11\r\nmkd:a\r\nb\r\nc\r\n"),
            Reply::Verbatim {
                format: "mkd".into(),
                text: b"a\r\nb\r\nc".to_vec()
            }
        );
        assert_eq!(
            ok(b"=4\r\ntxt:\r\n"),
            Reply::Verbatim {
                format: "txt".into(),
                text: vec![]
            }
        );
    }

    #[test]
    fn resp3_aggregates() {
        let map = ok(b"%2\r\n+first\r\n:1\r\n$6\r\nsecond\r\n,2.5\r\n");
        assert_eq!(
            map,
            Reply::Map(vec![
                (Reply::Status("first".into()), Reply::Int(1)),
                (bulk("second"), Reply::Double("2.5".into())),
            ])
        );
        assert_eq!(map.get("first"), Some(&Reply::Int(1)));
        assert_eq!(map.get("second"), Some(&Reply::Double("2.5".into())));
        assert_eq!(map.get("third"), None);
        assert_eq!(ok(b"%0\r\n"), Reply::Map(vec![]));
        assert_eq!(
            ok(b"~3\r\n+a\r\n:1\r\n#f\r\n"),
            Reply::Set(vec![
                Reply::Status("a".into()),
                Reply::Int(1),
                Reply::Bool(false)
            ])
        );
        assert_eq!(
            ok(b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"),
            Reply::Push(vec![bulk("message"), bulk("ch"), bulk("hi")])
        );
        // Aggregates nest in each other, and hold RESP3 nulls.
        assert_eq!(
            ok(b"*2\r\n%1\r\n$1\r\nk\r\n~1\r\n_\r\n_\r\n"),
            Reply::Array(vec![
                Reply::Map(vec![(bulk("k"), Reply::Set(vec![Reply::Null]))]),
                Reply::Null,
            ])
        );
    }

    #[test]
    fn attributes_are_skipped_wherever_they_are() {
        // The example of the RESP3 specification.
        let attributed = b"|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n*2\r\n:2039123\r\n:9543892\r\n";
        assert_eq!(
            ok(attributed),
            Reply::Array(vec![Reply::Int(2039123), Reply::Int(9543892)])
        );
        // Before an element of an aggregate, and before a scalar.
        assert_eq!(
            ok(b"*2\r\n:1\r\n|1\r\n+ttl\r\n:3600\r\n+OK\r\n"),
            Reply::Array(vec![Reply::Int(1), Reply::Status("OK".into())])
        );
        // An attribute alone is not a reply.
        assert_eq!(
            fails(b"|1\r\n+a\r\n:1\r\n").kind(),
            io::ErrorKind::UnexpectedEof
        );
    }

    #[test]
    fn replies_are_read_one_at_a_time() {
        let mut stream: &[u8] = b">2\r\n+invalidate\r\n*1\r\n$1\r\nk\r\n_\r\n,3\r\n";
        assert_eq!(
            read_reply(&mut stream).unwrap(),
            Reply::Push(vec![
                Reply::Status("invalidate".into()),
                Reply::Array(vec![bulk("k")])
            ])
        );
        assert_eq!(read_reply(&mut stream).unwrap(), Reply::Null);
        assert_eq!(read_reply(&mut stream).unwrap(), Reply::Double("3".into()));
        assert_eq!(
            read_reply(&mut stream).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
    }

    #[test]
    fn malformed_input_is_an_error() {
        use io::ErrorKind::{InvalidData, UnexpectedEof};
        let cases: [(&[u8], io::ErrorKind); 15] = [
            (b"", UnexpectedEof),
            (b"$3\r\nab", UnexpectedEof),
            (b"*2\r\n:1\r\n", UnexpectedEof),
            (b"%1\r\n+k\r\n", UnexpectedEof),
            (b"=8\r\ntxt:ab", UnexpectedEof),
            (b"#x\r\n", InvalidData),
            (b"$3\r\nabcd\r\n", InvalidData),
            (b"=5\r\ntxtab\r\n", InvalidData),
            (b"=3\r\ntxt\r\n", InvalidData),
            (b"%-1\r\n", InvalidData),
            (b"~x\r\n", InvalidData),
            (b"!-1\r\n", InvalidData),
            (b"_x\r\n", InvalidData),
            (b"+OK\n", InvalidData),
            (b"+OK\r\n+extra\r\n", InvalidData),
        ];
        for (bytes, kind) in cases {
            assert_eq!(fails(bytes).kind(), kind, "{bytes:?}");
        }
    }
}
