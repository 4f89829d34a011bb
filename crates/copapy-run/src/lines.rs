//! The line protocol on stdin/stdout (`copapy-run PROGRAM --stdio`): one command per
//! line, one reply line per command starting with `ok` or `err` (see `docs/copapy-run.md`).
//! A `run` or `stream` stops, and the runner ends, when the parent closes stdin.
#![forbid(unsafe_code)]

use std::io::{BufRead, Write};

use crate::server::Peer;
use crate::session::{describe, format_bits, parse_bits, Session};

/// What the caller should do after a command.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    /// Read the next command.
    Continue,
    /// `quit` was received, or the peer left during `run` or `stream`.
    Quit,
}

fn values(session: &Session, name: &str) -> Result<String, String> {
    let ty = session.symbol(name)?.ty;
    let bits = session.get(name)?;
    Ok(bits
        .iter()
        .map(|&b| format_bits(ty, b))
        .collect::<Vec<_>>()
        .join(" "))
}

fn count(arg: Option<&str>) -> Result<u32, String> {
    match arg {
        None => Ok(1),
        Some(t) => t
            .parse()
            .map_err(|_| format!("{t:?} is not a step count (0 to 4294967295)")),
    }
}

/// Executes one command line, writing its reply lines to `out`.
pub fn handle(
    session: &mut Session,
    line: &str,
    out: &mut impl Write,
    peer: &mut impl Peer,
) -> std::io::Result<Flow> {
    let mut words = line.split_whitespace();
    let Some(cmd) = words.next() else {
        return Ok(Flow::Continue);
    };
    let args: Vec<&str> = words.collect();
    let mut gone = false; // the peer left during `stream`
    let result: Result<String, String> = match cmd {
        "set" if !args.is_empty() => (|| {
            let ty = session.symbol(args[0])?.ty;
            let bits = args[1..]
                .iter()
                .map(|t| parse_bits(ty, t))
                .collect::<Result<Vec<_>, _>>()?;
            session.set(args[0], &bits)?;
            Ok(String::new())
        })(),
        "get" if args.len() == 1 => values(session, args[0]),
        "run" if args.len() <= 1 => match count(args.first().copied())
            .and_then(|n| session.run_checked(n, || !peer.gone()))
        {
            Ok(false) => return Ok(Flow::Quit), // nobody left to reply to
            r => r.map(|_| String::new()),
        },
        "stream" if !args.is_empty() => (|| {
            let n = count(Some(args[0]))?;
            for name in &args[1..] {
                session.symbol(name)?;
            }
            for _ in 0..n {
                if peer.gone() {
                    gone = true;
                    return Ok(String::new());
                }
                session.run(1)?;
                let row = args[1..]
                    .iter()
                    .map(|name| Ok(format!("{name}={}", values(session, name)?)))
                    .collect::<Result<Vec<_>, String>>()?;
                writeln!(out, "data {}", row.join(" ")).map_err(|e| e.to_string())?;
            }
            Ok(String::new())
        })(),
        "vars" if args.is_empty() => session.symbols().map(|s| {
            s.iter()
                .map(|s| describe(s).replace(' ', ":"))
                .collect::<Vec<_>>()
                .join(" ")
        }),
        "quit" => {
            writeln!(out, "ok")?;
            return Ok(Flow::Quit);
        }
        _ => Err(format!(
            "unknown command {line:?}: use set NAME V..., get NAME, run [N], stream N NAME..., vars, quit"
        )),
    };
    if gone {
        return Ok(Flow::Quit);
    }
    match result {
        Ok(s) if s.is_empty() => writeln!(out, "ok")?,
        Ok(s) => writeln!(out, "ok {s}")?,
        Err(e) => writeln!(out, "err {e}")?,
    }
    Ok(Flow::Continue)
}

/// Serves commands from `input` until `quit`, end of input, or a peer that left during
/// `run` or `stream`.
pub fn serve(
    session: &mut Session,
    input: impl BufRead,
    mut out: impl Write,
    peer: &mut impl Peer,
) -> std::io::Result<()> {
    for line in input.lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                writeln!(out, "err line is not UTF-8")?;
                continue;
            }
            Err(e) => return Err(e),
        };
        let flow = handle(session, &line, &mut out, peer)?;
        out.flush()?;
        if flow == Flow::Quit {
            break;
        }
    }
    Ok(())
}
