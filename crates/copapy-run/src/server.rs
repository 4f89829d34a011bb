//! Frame server: the binary protocol over any byte stream (a TCP connection, or
//! stdin/stdout of a child process). Every bad frame gets an error reply.
#![forbid(unsafe_code)]

use std::io::{self, Read, Write};

use crate::protocol::{self, kind, Request};
use crate::session::{describe, Session};

/// Serves one client until it sends STOP, closes the stream, or sends a frame length
/// that makes the stream unframeable. I/O errors (a client vanishing mid-frame) end
/// the session quietly: they are the client's business, not the runner's.
pub fn serve(
    session: &mut Session,
    mut input: impl Read,
    mut output: impl Write,
) -> io::Result<()> {
    let mut body = Vec::new();
    loop {
        let mut len = [0u8; 4];
        match input.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        let len = match protocol::check_length(u32::from_le_bytes(len)) {
            Ok(n) => n,
            Err(msg) => {
                output.write_all(&protocol::reply(kind::ERR, msg.as_bytes()))?;
                output.flush()?;
                return Ok(());
            }
        };
        body.clear();
        body.resize(len, 0);
        input.read_exact(&mut body)?;
        let stop = handle(session, &body, &mut output)?;
        output.flush()?;
        if stop {
            return Ok(());
        }
    }
}

fn ok(out: &mut impl Write, payload: &[u8]) -> io::Result<()> {
    out.write_all(&protocol::reply(kind::OK, payload))
}

/// Handles one frame body; returns whether the session ends.
pub fn handle(session: &mut Session, body: &[u8], out: &mut impl Write) -> io::Result<bool> {
    let req = match protocol::parse(body) {
        Ok(r) => r,
        Err(e) => {
            out.write_all(&protocol::reply(kind::ERR, e.to_string().as_bytes()))?;
            return Ok(false);
        }
    };
    let result: Result<Vec<u8>, String> = match req {
        Request::Load(file) => session.load(file).map(|()| Vec::new()),
        Request::Write { offset, bytes } => session.write(offset, bytes).map(|()| Vec::new()),
        Request::Read { offset, size } => session.read(offset, size),
        Request::Run(n) => session.run(n).map(|()| Vec::new()),
        Request::Set { name, bytes } => {
            let bits: Vec<u32> = bytes
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            session.set(name, &bits).map(|()| Vec::new())
        }
        Request::Get(name) => session
            .get(name)
            .map(|bits| bits.iter().flat_map(|b| b.to_le_bytes()).collect()),
        Request::Stream { steps, names } => {
            match names.iter().try_for_each(|n| session.symbol(n).map(|_| ())) {
                Err(e) => Err(e),
                Ok(()) => {
                    let mut failed = None;
                    for _ in 0..steps {
                        if let Err(e) = session.run(1) {
                            failed = Some(e);
                            break;
                        }
                        let mut row = Vec::new();
                        for n in &names {
                            let bits = session.get(n).unwrap_or_default();
                            row.extend(bits.iter().flat_map(|b| b.to_le_bytes()));
                        }
                        out.write_all(&protocol::reply(kind::DATA, &row))?;
                    }
                    failed.map_or(Ok(Vec::new()), Err)
                }
            }
        }
        Request::Info => Ok(crate::session::info().into_bytes()),
        Request::Vars => session.symbols().map(|s| {
            s.iter()
                .map(describe)
                .collect::<Vec<_>>()
                .join("\n")
                .into_bytes()
        }),
        Request::Stop => {
            ok(out, &[])?;
            return Ok(true);
        }
    };
    match result {
        Ok(payload) => ok(out, &payload)?,
        Err(msg) => out.write_all(&protocol::reply(kind::ERR, msg.as_bytes()))?,
    }
    Ok(false)
}
