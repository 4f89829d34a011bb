//! Who may open a session over TCP: a shared secret (the token) proven by
//! challenge-response with HMAC-SHA256, never sent on the wire.
//!
//! The handshake (frames of `docs/copapy-run.md`, "Authentication"):
//!
//! 1. runner → client: CHALLENGE `mode: u8` (1 = token required, 0 = no authentication,
//!    `--insecure-no-auth`), `server_nonce: [u8; 32]`, fresh random bytes per connection;
//! 2. client → runner: AUTH `client_nonce: [u8; 32]`,
//!    `HMAC(token, CLIENT_LABEL ‖ server_nonce ‖ client_nonce)`;
//! 3. runner → client: OK `HMAC(token, SERVER_LABEL ‖ server_nonce ‖ client_nonce)`, so the
//!    client knows it talks to a holder of the token too; or ERR, and the runner hangs up.
//!
//! A recorded AUTH answers one server nonce only, so replaying it to a new connection
//! fails; the two labels keep a runner's proof from being reflected back as a client's.
#![forbid(unsafe_code)]

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Bytes of each nonce and of each MAC.
pub const NONCE_BYTES: usize = 32;
/// Bytes of a MAC (HMAC-SHA256).
pub const MAC_BYTES: usize = 32;
/// Shortest token accepted (bytes of the file, surrounding whitespace removed).
pub const MIN_TOKEN_BYTES: usize = 16;
/// What the client's MAC covers before the nonces.
pub const CLIENT_LABEL: &[u8] = b"copapy-run auth v1 client";
/// What the runner's MAC covers before the nonces.
pub const SERVER_LABEL: &[u8] = b"copapy-run auth v1 server";
/// The environment variable naming the token file, for the runner and for Python clients.
pub const TOKEN_FILE_ENV: &str = "COPAPY_RUN_TOKEN_FILE";

/// A shared secret.
#[derive(Clone)]
pub struct Token(Vec<u8>);

impl core::fmt::Debug for Token {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Token(..)") // never print the secret
    }
}

impl Token {
    /// A token from its bytes (surrounding ASCII whitespace removed, so a file written
    /// by an editor with a final newline holds the same token).
    pub fn from_bytes(bytes: &[u8]) -> Result<Token, String> {
        let t = bytes.trim_ascii();
        if t.len() < MIN_TOKEN_BYTES {
            return Err(format!(
                "the token has {} bytes; use at least {MIN_TOKEN_BYTES} (the runner writes \
                 64 random hex digits when it creates a token file)",
                t.len()
            ));
        }
        Ok(Token(t.to_vec()))
    }

    fn mac(&self, label: &[u8], server_nonce: &[u8], client_nonce: &[u8]) -> Hmac<Sha256> {
        let mut m = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        m.update(label);
        m.update(server_nonce);
        m.update(client_nonce);
        m
    }

    /// The client's answer to a challenge.
    pub fn client_mac(&self, server_nonce: &[u8], client_nonce: &[u8]) -> [u8; MAC_BYTES] {
        self.mac(CLIENT_LABEL, server_nonce, client_nonce)
            .finalize()
            .into_bytes()
            .into()
    }

    /// The runner's proof that it holds the token too.
    pub fn server_mac(&self, server_nonce: &[u8], client_nonce: &[u8]) -> [u8; MAC_BYTES] {
        self.mac(SERVER_LABEL, server_nonce, client_nonce)
            .finalize()
            .into_bytes()
            .into()
    }

    /// Checks a client's answer in constant time.
    pub fn verify_client(&self, server_nonce: &[u8], client_nonce: &[u8], mac: &[u8]) -> bool {
        self.mac(CLIENT_LABEL, server_nonce, client_nonce)
            .verify_slice(mac)
            .is_ok()
    }
}

/// Fresh random bytes from the kernel.
pub fn random_bytes<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut b = [0u8; N];
    fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b)
}

/// Where the token file is when `--token-file` is not given: `$COPAPY_RUN_TOKEN_FILE`,
/// else `$XDG_CONFIG_HOME/copapy/run.token`, else `~/.config/copapy/run.token`. A config
/// directory, not a runtime one, so the token survives reboots and is copied to a client
/// machine once. `_remote.py` looks in the same places.
pub fn default_token_path() -> Result<PathBuf, String> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(p) = var(TOKEN_FILE_ENV) {
        return Ok(PathBuf::from(p));
    }
    let config = match (var("XDG_CONFIG_HOME"), var("HOME")) {
        (Some(c), _) => PathBuf::from(c),
        (None, Some(h)) => Path::new(&h).join(".config"),
        (None, None) => {
            return Err(format!(
                "no token file location: set HOME, XDG_CONFIG_HOME or {TOKEN_FILE_ENV}, \
                 or give --token-file"
            ))
        }
    };
    Ok(config.join("copapy").join("run.token"))
}

/// Reads the token file at `path`, creating it (64 random hex digits, mode 0600, its
/// directory 0700) when there is none. Refuses a file other users can read or write:
/// anyone who can read the token can run code as this runner.
pub fn load_or_create(path: &Path) -> Result<(Token, bool), String> {
    let shown = path.display();
    let created = match fs::symlink_metadata(path) {
        Ok(_) => false,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            let secret: [u8; 32] = random_bytes().map_err(|e| format!("no randomness: {e}"))?;
            let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
            let mut f = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .map_err(|e| format!("cannot create token file {shown}: {e}"))?;
            f.write_all(format!("{hex}\n").as_bytes())
                .map_err(|e| format!("cannot write token file {shown}: {e}"))?;
            true
        }
        Err(e) => return Err(format!("cannot read token file {shown}: {e}")),
    };
    let meta = fs::metadata(path).map_err(|e| format!("cannot read token file {shown}: {e}"))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "token file {shown} is accessible to other users (mode {mode:03o}): \
             run chmod 600 {shown}"
        ));
    }
    let bytes = fs::read(path).map_err(|e| format!("cannot read token file {shown}: {e}"))?;
    let token = Token::from_bytes(&bytes).map_err(|e| format!("token file {shown}: {e}"))?;
    Ok((token, created))
}

/// What a connection must do before its first request.
#[derive(Clone, Debug)]
pub enum Gate {
    /// Nothing, and no CHALLENGE is sent: the private stdio pipe of `--serve-stdio`,
    /// whose only peer is the parent process that started the runner.
    Pipe,
    /// Nothing, announced by a CHALLENGE with mode 0: `--insecure-no-auth`.
    Open,
    /// Answer this challenge with the token.
    Token {
        /// The shared secret.
        token: Token,
        /// This connection's nonce.
        nonce: [u8; NONCE_BYTES],
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_bind_token_label_and_both_nonces() {
        let t = Token::from_bytes(b"0123456789abcdef\n").unwrap();
        let (sn, cn) = ([1u8; 32], [2u8; 32]);
        let m = t.client_mac(&sn, &cn);
        assert!(t.verify_client(&sn, &cn, &m));
        assert!(
            !t.verify_client(&[3u8; 32], &cn, &m),
            "another server nonce"
        );
        assert!(
            !t.verify_client(&sn, &[3u8; 32], &m),
            "another client nonce"
        );
        assert!(
            !t.verify_client(&sn, &cn, &t.server_mac(&sn, &cn)),
            "reflection"
        );
        let other = Token::from_bytes(b"0123456789abcdeF").unwrap();
        assert!(!other.verify_client(&sn, &cn, &m));
        assert!(!t.verify_client(&sn, &cn, &m[..31]));
        assert!(Token::from_bytes(b"  short \n").is_err());
        assert_eq!(format!("{t:?}"), "Token(..)");
    }

    #[test]
    fn token_files_are_created_private_and_refused_when_shared() {
        let dir = std::env::temp_dir().join(format!("copapy-auth-{}", std::process::id()));
        let path = dir.join("sub").join("run.token");
        let (t1, created) = load_or_create(&path).unwrap();
        assert!(created);
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(fs::read_to_string(&path).unwrap().trim().len(), 64);
        let (t2, created) = load_or_create(&path).unwrap();
        assert!(!created);
        assert_eq!(t1.0, t2.0);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let e = load_or_create(&path).unwrap_err();
        assert!(e.contains("chmod 600"), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
