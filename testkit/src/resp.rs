//! A minimal RESP2 client: exact error texts, binary-safe arguments, explicit pipelining.
//! Tests need to see precisely what the server said, so nothing here interprets replies.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Int(i64),
    Bulk(Vec<u8>),
    Nil,
    Status(String),
    Error(String),
    Array(Vec<Reply>),
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

    /// A bulk or status reply as text.
    pub fn text(&self) -> String {
        match self {
            Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            Reply::Status(s) => s.clone(),
            other => panic!("expected text, got {other:?}"),
        }
    }

    pub fn array(&self) -> &[Reply] {
        match self {
            Reply::Array(items) => items,
            other => panic!("expected an array, got {other:?}"),
        }
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
        let mut line = Vec::new();
        self.reader.read_until(b'\n', &mut line)?;
        if line.len() < 3 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        let body = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
        Ok(match line[0] {
            b'+' => Reply::Status(body),
            b'-' => Reply::Error(body),
            b':' => Reply::Int(body.parse().expect("integer reply")),
            b'$' => {
                let len: i64 = body.parse().expect("bulk length");
                if len < 0 {
                    Reply::Nil
                } else {
                    let mut data = vec![0; len as usize + 2];
                    self.reader.read_exact(&mut data)?;
                    data.truncate(len as usize);
                    Reply::Bulk(data)
                }
            }
            b'*' => {
                let len: i64 = body.parse().expect("array length");
                if len < 0 {
                    Reply::Nil
                } else {
                    let mut items = Vec::with_capacity(len as usize);
                    for _ in 0..len {
                        items.push(self.read()?);
                    }
                    Reply::Array(items)
                }
            }
            other => panic!("unexpected RESP type byte {other}"),
        })
    }
}

impl Conn {
    /// Writes bytes already encoded as RESP (see `encode`): for load generators that build a
    /// pipeline once and send it whole.
    pub fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writer.write_all(bytes)
    }
}
