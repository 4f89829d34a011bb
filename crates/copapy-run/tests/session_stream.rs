//! The fuzz harness of the network session (`copapy_run::harness`, cargo-fuzz target
//! `fuzz/fuzz_targets/session_stream.rs`) run deterministically in the ordinary test
//! command: hand-written conversations with known replies, then generated streams
//! (random frames of every kind, random bytes, cut at random places) under every setup.
#![cfg(target_arch = "x86_64")] // the harness program is x86_64 code

use copapy_run::auth::Token;
use copapy_run::harness::{auth_frame, drive, frames, CLIENT_NONCE, TOKEN};
use copapy_run::protocol::{kind, request};

fn program() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/seed_program.cpy"
    ))
    .expect("fuzz/seed_program.cpy")
}

/// Setup bytes (see `harness`): 1 = token required, 2 = a valid AUTH first.
const OPEN: u8 = 0;
const GATED: u8 = 1;
const AUTHED: u8 = 3;
const FIXED: u8 = 4;

fn conversation(setup: u8, requests: &[Vec<u8>]) -> Vec<(u8, Vec<u8>)> {
    let mut input = vec![setup];
    for r in requests {
        input.extend(r);
    }
    frames(&drive(&program(), &input))
        .into_iter()
        .map(|(k, b)| (k, b.to_vec()))
        .collect()
}

fn name(n: &str) -> Vec<u8> {
    let mut v = (n.len() as u16).to_le_bytes().to_vec();
    v.extend(n.as_bytes());
    v
}

fn first_var() -> String {
    let r = conversation(OPEN, &[request(kind::VARS, &[])]);
    let vars = String::from_utf8(r[1].1.clone()).unwrap();
    vars.split_whitespace().next().unwrap().to_string()
}

fn periodic(steps: u32, period_us: u32) -> Vec<u8> {
    let payload = [steps.to_le_bytes(), period_us.to_le_bytes()].concat();
    request(kind::PERIODIC, &payload)
}

#[test]
fn periodic_runs_report_their_steps_and_lateness_and_refuse_a_zero_period() {
    let r = conversation(OPEN, &[periodic(3, 200), periodic(1, 0), periodic(0, 5)]);
    let kinds: Vec<u8> = r.iter().map(|f| f.0).collect();
    assert_eq!(kinds, [kind::CHALLENGE, kind::OK, kind::ERR, kind::OK]);
    let field = |f: &[u8], i: usize| u32::from_le_bytes(f[4 * i..4 * i + 4].try_into().unwrap());
    let report = &r[1].1;
    assert_eq!(report.len(), 20);
    assert_eq!(field(report, 0), 3, "steps run");
    assert!(field(report, 1) <= field(report, 2), "overruns <= skipped");
    assert!(field(report, 4) <= field(report, 3), "mean <= max lateness");
    assert!(String::from_utf8_lossy(&r[2].1).contains("period"));
    assert_eq!(&r[3].1, &[0; 20], "no steps, nothing late");
}

#[test]
fn authenticated_sessions_are_served_and_prove_the_runner_holds_the_token() {
    let var = first_var();
    let r = conversation(
        AUTHED,
        &[
            request(kind::RUN, &5u32.to_le_bytes()),
            request(kind::GET, &name(&var)),
            request(kind::STOP, &[]),
        ],
    );
    let kinds: Vec<u8> = r.iter().map(|f| f.0).collect();
    assert_eq!(
        kinds,
        [kind::CHALLENGE, kind::OK, kind::OK, kind::OK, kind::OK]
    );
    assert_eq!(r[0].1[0], 1, "token required");
    let token = Token::from_bytes(TOKEN).unwrap();
    assert_eq!(r[1].1, token.server_mac(&r[0].1[1..], &CLIENT_NONCE));
    assert!(!r[3].1.is_empty() && r[3].1.len().is_multiple_of(4));
}

#[test]
fn no_auth_a_wrong_token_or_a_replayed_answer_gets_one_error_and_nothing_else() {
    let run = request(kind::RUN, &1u32.to_le_bytes());
    // no AUTH at all
    let r = conversation(GATED, &[run.clone(), run.clone()]);
    assert_eq!(r.len(), 2);
    assert!(String::from_utf8_lossy(&r[1].1).contains("authenticate first"));
    // a wrong token
    let wrong = Token::from_bytes(b"another-token-0123456789").unwrap();
    let mut payload = CLIENT_NONCE.to_vec();
    payload.extend(wrong.client_mac(&[0x5A; 32], &CLIENT_NONCE));
    let r = conversation(GATED, &[request(kind::AUTH, &payload), run.clone()]);
    assert_eq!(r.len(), 2);
    assert!(String::from_utf8_lossy(&r[1].1).contains("authentication failed"));
    // the right token's answer to another nonce (a recorded AUTH replayed)
    let token = Token::from_bytes(TOKEN).unwrap();
    let mut payload = CLIENT_NONCE.to_vec();
    payload.extend(token.client_mac(&[0x11; 32], &CLIENT_NONCE));
    let r = conversation(GATED, &[request(kind::AUTH, &payload), run.clone()]);
    assert_eq!(r.len(), 2);
    assert_eq!(r[1].0, kind::ERR);
    // the valid AUTH of the harness, sent by hand, works
    let r = conversation(GATED, &[auth_frame(), run]);
    assert_eq!(
        r.iter().map(|f| f.0).collect::<Vec<_>>(),
        [kind::CHALLENGE, kind::OK, kind::OK]
    );
}

#[test]
fn a_fixed_program_refuses_load_write_and_read() {
    let var = first_var();
    let mut set = vec![];
    set.extend(name(&var));
    set.extend(7i32.to_le_bytes());
    let r = conversation(
        OPEN | FIXED,
        &[
            request(kind::LOAD, &program()),
            request(kind::WRITE, &[0, 0, 0, 0, 1]),
            request(kind::READ, &[0, 0, 0, 0, 4, 0, 0, 0]),
            request(kind::RUN, &1u32.to_le_bytes()),
        ],
    );
    for (f, what) in r[1..4].iter().zip(["LOAD", "WRITE", "READ"]) {
        assert_eq!(f.0, kind::ERR);
        let msg = String::from_utf8_lossy(&f.1);
        assert!(msg.starts_with(what) && msg.contains("--no-load"), "{msg}");
    }
    assert_eq!(r[4].0, kind::OK);
}

/// xorshift64*: reproducible inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn random_request(rng: &mut Rng, var: &str) -> Vec<u8> {
    let n = (rng.below(3) * rng.below(100_000)) as u32;
    let (short, words) = (rng.below(40) as usize, 4 * rng.below(3) as usize);
    let body = match rng.below(15) {
        0 => vec![kind::LOAD],
        1 => [vec![kind::WRITE], rng.bytes(4 + short / 2)].concat(),
        2 => [
            vec![kind::READ],
            (rng.below(300) as u32).to_le_bytes().to_vec(),
            (rng.below(64) as u32).to_le_bytes().to_vec(),
        ]
        .concat(),
        3 => [vec![kind::RUN], n.to_le_bytes().to_vec()].concat(),
        4 => [vec![kind::SET], name(var), rng.bytes(words)].concat(),
        5 => [vec![kind::GET], name(var)].concat(),
        6 => [
            vec![kind::STREAM],
            n.to_le_bytes().to_vec(),
            vec![1],
            name(var),
        ]
        .concat(),
        7 => vec![kind::INFO],
        8 => vec![kind::VARS],
        9 => vec![kind::STOP],
        10 => [vec![kind::AUTH], rng.bytes(64)].concat(),
        11 => rng.bytes(short),
        13 => [
            vec![kind::PERIODIC],
            (rng.below(4) as u32).to_le_bytes().to_vec(),
            (rng.below(300) as u32).to_le_bytes().to_vec(),
        ]
        .concat(),
        12 => return rng.bytes(short / 3), // no framing at all
        _ => return ((1 + rng.below(1 << 27)) as u32).to_le_bytes().to_vec(), // a huge prefix
    };
    let mut f = (body.len() as u32).to_le_bytes().to_vec();
    f.extend(body);
    if rng.below(20) == 0 {
        let cut = rng.below(f.len() as u64) as usize;
        f.truncate(cut); // the client is gone mid-frame
    }
    f
}

#[test]
fn generated_streams_keep_the_invariants_under_every_setup() {
    let program = program();
    let var = first_var();
    let mut rng = Rng(0x00C0_FFEE_1234_5678);
    let mut served = 0;
    for k in 0..3000u32 {
        let mut input = vec![(k % 128) as u8];
        for _ in 0..rng.below(12) {
            input.extend(random_request(&mut rng, &var));
        }
        let out = drive(&program, &input);
        served += frames(&out).len();
    }
    assert!(
        served > 10_000,
        "the streams reached the handlers ({served} replies)"
    );
}
