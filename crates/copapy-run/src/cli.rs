//! Command-line parsing and the modes of `copapy-run` (usage in [`USAGE`]).
#![forbid(unsafe_code)]

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use copapy_program::Role;

use crate::auth::{self, Gate};
use crate::frames::{Budget, FrameLimits, FrameReader, ReadTimeout};
use crate::listen::{self, Listen};
use crate::peer::PeerWatch;
use crate::periodic::{run_periodic, End};
use crate::protocol::MAX_FRAME;
use crate::realtime::enter_realtime;
use crate::server::{Connection, Peer, Policy};
use crate::session::{format_bits, parse_bits, Session};

/// The help text.
pub const USAGE: &str = "\
usage: copapy-run [PROGRAM] [options]

Runs a copapy program file (written by Target.save).

  -n, --steps N        run N steps (default 1)
  --period DUR         one step every DUR (e.g. 1ms, 250us), absolute deadlines on the
                       monotonic clock; prints step time and wake-up lateness statistics
  --duration DUR       with --period: run for DUR of wall-clock time instead of N steps
  --set NAME=V[,V..]   set a variable before the first step (repeatable)
  --print NAME[,..]    print these variables after every step
  --plugin LIB.so      offer the C functions LIB exports (copapy_imports) to programs'
                       imports (cp.extern; repeatable; built-ins: copapy_time_s,
                       copapy_time_us, copapy_cycles)
  --stdio              read line commands from stdin (set/get/run/stream/vars/quit)
  --serve-stdio        speak the binary frame protocol on stdin/stdout (a private pipe
                       to the parent process: no authentication)
  --listen ADDR        speak the binary frame protocol over TCP (e.g. 127.0.0.1:0);
                       one session per connection, each with its own copy of PROGRAM.
                       Every session can run machine code as this user: clients must
                       prove they hold the token (see Security in docs/copapy-run.md)
  --token-file PATH    the shared secret (created, mode 0600, if missing); default
                       $COPAPY_RUN_TOKEN_FILE, else $XDG_CONFIG_HOME/copapy/run.token,
                       else ~/.config/copapy/run.token
  --insecure-no-auth   accept every client without a token: anyone who can connect
                       runs code as this user
  --allow-remote       allow ADDR beyond loopback (e.g. 0.0.0.0:5000)
  --no-load            serve PROGRAM only: refuse LOAD, WRITE and READ (by name only)
  --max-sessions N     sessions at once over TCP (default 16); more get an error
  --max-frame BYTES    largest frame (default and maximum 64M; suffixes K, M, G)
  --max-buffered BYTES frame buffers of all TCP sessions together (default 256M)
  --idle-timeout DUR   close a TCP session idle this long (default 3600s)
  --frame-timeout DUR  close a TCP session whose frame (or reply) stalls this long, and
                       one that has not authenticated by then (default 30s)
  --info               print the target this CPU runs and its features, e.g.
                       `armv7 armv6,armv7,vfp2,vfp3`; with PROGRAM also its
                       target, whether this runner accepts it, its sizes and its
                       variables (in0, in1, ... in creation order); then exit
  --no-rt              do not try SCHED_FIFO and mlockall in --period mode
  --priority P         SCHED_FIFO priority (default 80)
  -V, --version        print the version and the program format version it reads
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
    /// The token file.
    pub token_file: Option<String>,
    /// No authentication.
    pub insecure_no_auth: bool,
    /// Bind beyond loopback.
    pub allow_remote: bool,
    /// Serve the given program only.
    pub no_load: bool,
    /// Sessions at once.
    pub max_sessions: Option<usize>,
    /// Largest frame in bytes.
    pub max_frame: Option<usize>,
    /// Frame buffers of all sessions, bytes.
    pub max_buffered: Option<usize>,
    /// Idle timeout in ns.
    pub idle_timeout_ns: Option<u64>,
    /// Frame timeout in ns.
    pub frame_timeout_ns: Option<u64>,
    /// SCHED_FIFO priority.
    pub priority: i32,
    /// Shared libraries whose functions programs may import (`--plugin`).
    pub plugins: Vec<String>,
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

/// Parses `4096`, `64K`, `64M`, `1G` (binary multiples; `KiB`, `MiB`, `GiB` too).
pub fn parse_bytes(text: &str) -> Result<usize, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (num, unit) = text.split_at(split);
    let shift = match unit {
        "" | "B" => 0,
        "K" | "KiB" | "k" => 10,
        "M" | "MiB" => 20,
        "G" | "GiB" => 30,
        _ => return Err(format!("{text:?}: use a byte count like 4096, 64K or 64M")),
    };
    let n: usize = num
        .parse()
        .map_err(|_| format!("{text:?} is not a byte count like 64M"))?;
    n.checked_mul(1 << shift)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("{text:?} is out of range"))
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
            "--plugin" => o.plugins.push(value(a)?),
            "--serve-stdio" => o.serve_stdio = true,
            "--listen" => o.listen = Some(value(a)?),
            "--no-rt" => o.no_rt = true,
            "--token-file" => o.token_file = Some(value(a)?),
            "--insecure-no-auth" => o.insecure_no_auth = true,
            "--allow-remote" => o.allow_remote = true,
            "--no-load" => o.no_load = true,
            "--max-sessions" => {
                let v = value(a)?;
                o.max_sessions = Some(
                    v.parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| format!("{v:?} is not a session count (1 or more)"))?,
                );
            }
            "--max-frame" => o.max_frame = Some(parse_bytes(&value(a)?)?.min(MAX_FRAME as usize)),
            "--max-buffered" => o.max_buffered = Some(parse_bytes(&value(a)?)?),
            "--idle-timeout" => o.idle_timeout_ns = Some(parse_duration(&value(a)?)?),
            "--frame-timeout" => o.frame_timeout_ns = Some(parse_duration(&value(a)?)?),
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
    let tcp_only = [
        (o.token_file.is_some(), "--token-file"),
        (o.insecure_no_auth, "--insecure-no-auth"),
        (o.allow_remote, "--allow-remote"),
        (o.max_sessions.is_some(), "--max-sessions"),
        (o.max_buffered.is_some(), "--max-buffered"),
        (o.idle_timeout_ns.is_some(), "--idle-timeout"),
        (o.frame_timeout_ns.is_some(), "--frame-timeout"),
    ];
    if let Some((_, flag)) = tcp_only.iter().find(|(set, _)| *set && o.listen.is_none()) {
        return Err(format!("{flag} needs --listen"));
    }
    if o.token_file.is_some() && o.insecure_no_auth {
        return Err("give either --token-file or --insecure-no-auth, not both".to_string());
    }
    if (o.no_load || o.max_frame.is_some()) && o.listen.is_none() && !o.serve_stdio {
        return Err("--no-load and --max-frame need --listen or --serve-stdio".to_string());
    }
    if o.no_load && o.program.is_none() {
        return Err("--no-load needs the PROGRAM to serve".to_string());
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
    for path in &o.plugins {
        crate::plugins::load_plugin(path)?;
    }
    if o.info {
        println!("{}", crate::session::info());
        if let Some(path) = o.program.as_deref() {
            let bytes = std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"))?;
            let about = crate::session::program_info(&bytes).map_err(|e| format!("{path}: {e}"))?;
            println!("{about}");
        }
        return Ok(());
    }
    if o.listen.is_some() {
        return listen_tcp(o);
    }
    if o.serve_stdio {
        return serve_stdio(&o);
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
        let mut parent = PeerWatch::new(0); // stdin: the parent's end of the pipe
        return crate::lines::serve(
            &mut session,
            io::stdin().lock(),
            io::stdout().lock(),
            &mut parent,
        )
        .map_err(|e| e.to_string());
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    if let Some(period) = o.period_ns {
        let end = match o.duration_ns {
            Some(d) => End::After(d),
            None => End::Steps(o.steps.unwrap_or(1)),
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
        let report = run_periodic(
            &mut session,
            period,
            end,
            |s, k| {
                if !print.is_empty() {
                    let _ = writeln!(out, "step={k} {}", row(s, print));
                }
            },
            || true,
        );
        if o.print.is_empty() {
            print_final(&session, &mut out)?;
        }
        out.flush().map_err(|e| e.to_string())?;
        eprintln!(
            "period {} µs, {} steps, {} overruns ({} deadlines skipped)",
            period as f64 / 1000.0,
            report.steps,
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

fn policy(o: &Options) -> Policy {
    if o.no_load {
        Policy::FIXED_PROGRAM
    } else {
        Policy::ALL
    }
}

fn listen_tcp(o: Options) -> Result<(), String> {
    let token = if o.insecure_no_auth {
        None
    } else {
        let path = match &o.token_file {
            Some(p) => PathBuf::from(p),
            None => auth::default_token_path()?,
        };
        let (token, created) = auth::load_or_create(&path)?;
        if created {
            eprintln!(
                "copapy-run: created token file {} (mode 0600): clients need a copy of it",
                path.display()
            );
        }
        Some(token)
    };
    let program = match &o.program {
        Some(p) => Some(std::fs::read(p).map_err(|e| format!("cannot read {p}: {e}"))?),
        None => None,
    };
    let secs = |ns: Option<u64>, default: Duration| ns.map_or(default, Duration::from_nanos);
    listen::listen(Listen {
        addr: o.listen.clone().unwrap_or_default(),
        program,
        token,
        allow_remote: o.allow_remote,
        policy: policy(&o),
        max_sessions: o.max_sessions.unwrap_or(listen::DEFAULT_MAX_SESSIONS),
        max_buffered: o.max_buffered.unwrap_or(listen::DEFAULT_MAX_BUFFERED),
        limits: FrameLimits {
            max_frame: o.max_frame.unwrap_or(MAX_FRAME as usize),
            idle: Some(secs(o.idle_timeout_ns, listen::DEFAULT_IDLE)),
            frame: Some(secs(o.frame_timeout_ns, listen::DEFAULT_FRAME)),
        },
    })
}

/// stdin of `--serve-stdio`: no timeouts (the parent decides how long to wait); the
/// parent is gone when the pipe's writing end is closed.
struct StdinInput {
    stdin: io::StdinLock<'static>,
    watch: PeerWatch,
}

impl Read for StdinInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stdin.read(buf)
    }
}

impl ReadTimeout for StdinInput {
    fn set_read_timeout(&mut self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }
}

impl Peer for StdinInput {
    fn gone(&mut self) -> bool {
        self.watch.gone()
    }
}

/// The frame protocol on stdin/stdout, for the process that started this runner
/// (`Target(runner="process")`): the pipe is private to that parent, which could run
/// any code itself, so there is no handshake.
fn serve_stdio(o: &Options) -> Result<(), String> {
    let session = match &o.program {
        Some(p) => load(p)?,
        None => Session::new(),
    };
    let mut conn = Connection::new(session, policy(o), Gate::Pipe);
    let mut input = StdinInput {
        stdin: io::stdin().lock(),
        watch: PeerWatch::new(0),
    };
    let limits = FrameLimits {
        max_frame: o.max_frame.unwrap_or(MAX_FRAME as usize),
        idle: None,
        frame: None,
    };
    let mut reader = FrameReader::new(Budget::unlimited());
    let stdout = io::BufWriter::new(io::stdout().lock());
    crate::server::serve(&mut conn, &mut input, stdout, &mut reader, &limits)
        .map_err(|e| e.to_string())
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
        let o = parse_args(&args(
            "--listen 127.0.0.1:0 --token-file t --max-sessions 3 --max-frame 1K \
             --max-buffered 2M --idle-timeout 5s --frame-timeout 1s --no-load p",
        ))
        .unwrap();
        assert_eq!(o.token_file.as_deref(), Some("t"));
        assert_eq!(o.max_sessions, Some(3));
        assert_eq!((o.max_frame, o.max_buffered), (Some(1024), Some(2 << 20)));
        assert_eq!(o.idle_timeout_ns, Some(5_000_000_000));
        assert!(o.no_load);
        for bad in [
            "p --token-file t",
            "p --allow-remote",
            "--listen a --insecure-no-auth --token-file t",
            "--listen a --no-load",
            "--listen a --max-sessions 0",
            "p --no-load",
        ] {
            assert!(parse_args(&args(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn byte_counts() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("64K"), Ok(64 << 10));
        assert_eq!(parse_bytes("3MiB"), Ok(3 << 20));
        assert_eq!(parse_bytes("1G"), Ok(1 << 30));
        for bad in ["", "0", "1T", "-1", "M", "99999999999999999999G"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }
}
