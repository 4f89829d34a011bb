//! Command-line parsing and the modes of `copapy-run` (usage in [`USAGE`]).
#![forbid(unsafe_code)]

use std::io::{self, Write};
use std::net::TcpListener;

use copapy_program::Role;

use crate::periodic::run_periodic;
use crate::realtime::enter_realtime;
use crate::session::{format_bits, parse_bits, Session};

/// The help text.
pub const USAGE: &str = "\
usage: copapy-run [PROGRAM] [options]

Runs a copapy program file (written by Target.save).

  -n, --steps N        run N steps (default 1)
  --period DUR         one step every DUR (e.g. 1ms, 250us), absolute deadlines on the
                       monotonic clock; prints step time and wake-up lateness statistics
  --duration DUR       with --period: run for DUR instead of N steps
  --set NAME=V[,V..]   set a variable before the first step (repeatable)
  --print NAME[,..]    print these variables after every step
  --stdio              read line commands from stdin (set/get/run/stream/vars/quit)
  --serve-stdio        speak the binary frame protocol on stdin/stdout
  --listen ADDR        speak the binary frame protocol over TCP (e.g. 127.0.0.1:0);
                       one session per connection, each with its own copy of PROGRAM
  --info               print the target this CPU runs and its features, e.g.
                       armv7 armv6,armv7,vfp2,vfp3, and exit
  --no-rt              do not try SCHED_FIFO and mlockall in --period mode
  --priority P         SCHED_FIFO priority (default 80)
  -h, --help           this text

Without --print, the variables that are not inputs are printed after the last step.
Protocols: docs/copapy-run.md.";

/// Parsed options.
#[derive(Debug, Default, PartialEq)]
pub struct Options {
    /// Program file path.
    pub program: Option<String>,
    /// Step count.
    pub steps: Option<u64>,
    /// Period in ns.
    pub period_ns: Option<u64>,
    /// Duration in ns.
    pub duration_ns: Option<u64>,
    /// `(name, values)` to set first.
    pub set: Vec<(String, Vec<String>)>,
    /// Names to print per step.
    pub print: Vec<String>,
    /// Line commands on stdin.
    pub stdio: bool,
    /// Frames on stdin/stdout.
    pub serve_stdio: bool,
    /// TCP address to listen on.
    pub listen: Option<String>,
    /// Skip realtime setup.
    pub no_rt: bool,
    /// SCHED_FIFO priority.
    pub priority: i32,
    /// Print usage.
    pub help: bool,
    /// Print the target and CPU features.
    pub info: bool,
}

/// Parses `250us`, `1ms`, `2s`, `100ns` (a plain number is nanoseconds).
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (num, unit) = text.split_at(split);
    let scale = match unit {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => {
            return Err(format!(
                "unknown time unit in {text:?}: use ns, us, ms or s"
            ))
        }
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{text:?} is not a duration like 1ms"))?;
    let ns = (v * scale).round();
    if !(1.0..=1e15).contains(&ns) {
        return Err(format!(
            "duration {text:?} is out of range (1 ns to ~11 days)"
        ));
    }
    Ok(ns as u64)
}

/// Parses the arguments after the program name.
pub fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        priority: 80,
        ..Options::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match a.as_str() {
            "-h" | "--help" => o.help = true,
            "--info" => o.info = true,
            "-n" | "--steps" => {
                let v = value(a)?;
                o.steps = Some(
                    v.parse()
                        .map_err(|_| format!("{v:?} is not a step count"))?,
                );
            }
            "--period" => o.period_ns = Some(parse_duration(&value(a)?)?),
            "--duration" => o.duration_ns = Some(parse_duration(&value(a)?)?),
            "--set" => {
                let v = value(a)?;
                let (name, vals) = v
                    .split_once('=')
                    .ok_or_else(|| format!("--set {v:?}: use NAME=VALUE[,VALUE...]"))?;
                o.set.push((
                    name.to_string(),
                    vals.split(',').map(str::to_string).collect(),
                ));
            }
            "--print" => o.print.extend(value(a)?.split(',').map(str::to_string)),
            "--stdio" => o.stdio = true,
            "--serve-stdio" => o.serve_stdio = true,
            "--listen" => o.listen = Some(value(a)?),
            "--no-rt" => o.no_rt = true,
            "--priority" => {
                let v = value(a)?;
                o.priority = v.parse().map_err(|_| format!("{v:?} is not a priority"))?;
            }
            s if s.starts_with('-') => return Err(format!("unknown option {s:?}\n\n{USAGE}")),
            s => {
                if o.program.replace(s.to_string()).is_some() {
                    return Err("give one program file".to_string());
                }
            }
        }
    }
    if o.duration_ns.is_some() && o.period_ns.is_none() {
        return Err("--duration needs --period".to_string());
    }
    if o.duration_ns.is_some() && o.steps.is_some() {
        return Err("give either --steps or --duration, not both".to_string());
    }
    Ok(o)
}

fn load(path: &str) -> Result<Session, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let mut s = Session::new();
    s.load(&bytes).map_err(|e| format!("{path}: {e}"))?;
    Ok(s)
}

fn row(session: &Session, names: &[String]) -> String {
    names
        .iter()
        .map(|n| {
            let ty = session.symbol(n).map(|s| s.ty).expect("names checked");
            let vals: Vec<String> = session
                .get(n)
                .unwrap_or_default()
                .into_iter()
                .map(|b| format_bits(ty, b))
                .collect();
            format!("{n}={}", vals.join(","))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `copapy-run` with parsed options; returns the process exit code.
pub fn run(o: Options) -> Result<(), String> {
    if o.help {
        println!("{USAGE}");
        return Ok(());
    }
    if o.info {
        println!("{}", crate::session::info());
        return Ok(());
    }
    if let Some(addr) = &o.listen {
        return listen(addr, o.program.as_deref());
    }
    if o.serve_stdio {
        let mut session = match &o.program {
            Some(p) => load(p)?,
            None => Session::new(),
        };
        let stdin = io::stdin().lock();
        let stdout = io::stdout().lock();
        return crate::server::serve(&mut session, stdin, io::BufWriter::new(stdout))
            .map_err(|e| e.to_string());
    }
    let path = o
        .program
        .as_deref()
        .ok_or_else(|| format!("no program file given\n\n{USAGE}"))?;
    let mut session = load(path)?;
    for (name, vals) in &o.set {
        let ty = session.symbol(name)?.ty;
        let bits = vals
            .iter()
            .map(|v| parse_bits(ty, v))
            .collect::<Result<Vec<_>, _>>()?;
        session.set(name, &bits)?;
    }
    for n in &o.print {
        session.symbol(n)?;
    }
    if o.stdio {
        return crate::lines::serve(&mut session, io::stdin().lock(), io::stdout().lock())
            .map_err(|e| e.to_string());
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    if let Some(period) = o.period_ns {
        let steps = match o.duration_ns {
            Some(d) => d / period,
            None => o.steps.unwrap_or(1),
        };
        if !o.no_rt {
            let rt = enter_realtime(o.priority);
            match &rt.fifo {
                Ok(p) => eprintln!("realtime: SCHED_FIFO priority {p}"),
                Err(e) => eprintln!(
                    "realtime: SCHED_FIFO not permitted ({e}); running with normal priority \
                     (run as root or grant CAP_SYS_NICE / an rtprio limit)"
                ),
            }
            match &rt.locked {
                Ok(()) => eprintln!("realtime: memory locked (mlockall)"),
                Err(e) => eprintln!("realtime: mlockall not permitted ({e}); pages may fault"),
            }
        }
        let print = &o.print;
        let report = run_periodic(&mut session, period, steps, |s, k| {
            if !print.is_empty() {
                let _ = writeln!(out, "step={k} {}", row(s, print));
            }
        });
        if o.print.is_empty() {
            print_final(&session, &mut out)?;
        }
        out.flush().map_err(|e| e.to_string())?;
        eprintln!(
            "period {} µs, {steps} steps, {} overruns ({} deadlines skipped)",
            period as f64 / 1000.0,
            report.overruns,
            report.skipped
        );
        if let Some(s) = report.step {
            eprintln!("step time: {s}");
        }
        if let Some(s) = report.lateness {
            eprintln!("wake-up lateness: {s}");
        }
        return Ok(());
    }
    let steps = o.steps.unwrap_or(1);
    for k in 0..steps {
        session.step();
        if !o.print.is_empty() {
            writeln!(out, "step={k} {}", row(&session, &o.print)).map_err(|e| e.to_string())?;
        }
    }
    if o.print.is_empty() {
        print_final(&session, &mut out)?;
    }
    out.flush().map_err(|e| e.to_string())
}

fn print_final(session: &Session, out: &mut impl Write) -> Result<(), String> {
    let names: Vec<String> = session
        .symbols()?
        .iter()
        .filter(|s| s.role != Role::Input)
        .map(|s| s.name.clone())
        .collect();
    for n in &names {
        writeln!(out, "{}", row(session, std::slice::from_ref(n))).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn listen(addr: &str, program: Option<&str>) -> Result<(), String> {
    let initial = match program {
        Some(p) => Some(std::fs::read(p).map_err(|e| format!("cannot read {p}: {e}"))?),
        None => None,
    };
    if let Some(bytes) = &initial {
        Session::new().load(bytes)?; // refuse a bad file before accepting clients
    }
    let listener = TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    println!("listening on {local}");
    io::stdout().flush().map_err(|e| e.to_string())?;
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let initial = initial.clone();
        std::thread::spawn(move || {
            let _ = stream.set_nodelay(true);
            let mut session = Session::new();
            if let Some(bytes) = &initial {
                let _ = session.load(bytes);
            }
            let Ok(reader) = stream.try_clone() else {
                return;
            };
            let _ = crate::server::serve(
                &mut session,
                io::BufReader::new(reader),
                io::BufWriter::new(stream),
            );
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1ms"), Ok(1_000_000));
        assert_eq!(parse_duration("250us"), Ok(250_000));
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration("100"), Ok(100));
        assert!(parse_duration("1h").is_err());
        assert!(parse_duration("0ms").is_err());
        assert!(parse_duration("ms").is_err());
    }

    #[test]
    fn options() {
        let o = parse_args(&args(
            "p.cpy --period 1ms --duration 10s --set x=1,2 --print y,u",
        ))
        .unwrap();
        assert_eq!(o.program.as_deref(), Some("p.cpy"));
        assert_eq!(o.period_ns, Some(1_000_000));
        assert_eq!(o.duration_ns, Some(10_000_000_000));
        assert_eq!(
            o.set,
            vec![("x".to_string(), vec!["1".to_string(), "2".to_string()])]
        );
        assert_eq!(o.print, vec!["y", "u"]);
        assert!(parse_args(&args("p --duration 1s")).is_err());
        assert!(parse_args(&args("p --bogus")).is_err());
        assert!(parse_args(&args("p q")).is_err());
        assert!(parse_args(&args("p -n")).is_err());
    }
}
