//! The real `payments-sandbox` binary in a child process.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The sandbox's binary, as `cargo test` built it for these tests (tests/Cargo.toml).
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| built("payments-sandbox-under-test"))
}

/// The `payments` CLI's binary (crates/payments-cli), as `cargo test` built it for these tests.
pub fn cli_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| built("payments-under-test"))
}

/// A binary target of this package: cargo builds them before it runs an integration test and
/// puts them in the directory above the tests' own (`target/debug/deps/..`). Only the tests can
/// read `CARGO_BIN_EXE_*`, and this is their library.
fn built(bin: &str) -> PathBuf {
    let test = std::env::current_exe().expect("the test binary's path");
    let directory = test.parent().and_then(Path::parent).expect("the test binary is in target/<profile>/deps");
    let binary = directory.join(format!("{bin}{}", std::env::consts::EXE_SUFFIX));
    assert!(binary.is_file(), "{} is missing: cargo test builds it with this package's tests", binary.display());
    binary
}

/// A running sandbox process and what it has printed so far.
pub struct Process {
    pub child: Child,
    pub url: String,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
}

pub fn spawn(database: &str, tokens: Option<&str>) -> Process {
    spawn_with(database, tokens, &[])
}

/// The binary on `database` with `PAYMENTS_SANDBOX_TOKENS` = `tokens`, `extra` arguments, no
/// rate limit, on an ephemeral port; returns once it has announced its address.
pub fn spawn_with(database: &str, tokens: Option<&str>, extra: &[&str]) -> Process {
    spawn_at("127.0.0.1:0", database, tokens, extra)
}

/// [`spawn_with`] listening on `address` (to start again where a stopped one was).
pub fn spawn_at(address: &str, database: &str, tokens: Option<&str>, extra: &[&str]) -> Process {
    let mut command = Command::new(binary());
    command
        .args(["--listen", address, "--rate-limit", "0", "--database", database])
        .args(extra)
        .env_remove("PAYMENTS_SANDBOX_TOKENS")
        .env("RUST_LOG", "payments_sandbox=info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The rails move only when asked, unless `extra` says otherwise.
    if !extra.contains(&"--rail-interval") {
        command.args(["--rail-interval", "0"]);
    }
    if let Some(tokens) = tokens {
        command.env("PAYMENTS_SANDBOX_TOKENS", tokens);
    }
    let mut child = command.spawn().expect("the sandbox starts");
    let stdout = Arc::new(Mutex::new(Vec::new()));
    let (url_sender, url_receiver) = std::sync::mpsc::channel();
    let lines = stdout.clone();
    let out = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let announced = line.starts_with("API reference: ");
            lines.lock().unwrap().push(line);
            // The announcement ends with the docs line; the URL is on its first line.
            if announced {
                let lines = lines.lock().unwrap();
                let url = lines.iter().find_map(|l| l.strip_prefix("Payments sandbox on ")).unwrap_or_default();
                let _ = url_sender.send(url.split(' ').next().unwrap_or_default().to_owned());
            }
        }
    });
    // The log goes on to the test's own output (shown when it fails), and is kept for `logged`.
    // The access log is kept only: a line per request would bury the failure's own message,
    // which CI shows only the head and tail of.
    let err = child.stderr.take().expect("stderr");
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let logged = stderr.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if !line.contains("payments_sandbox::access") {
                eprintln!("{line}");
            }
            logged.lock().unwrap().push(line);
        }
    });
    let url = url_receiver.recv_timeout(Duration::from_secs(60)).expect("the sandbox announces its address");
    Process { child, url, stdout, stderr }
}

impl Process {
    pub fn printed(&self) -> String {
        self.stdout.lock().unwrap().join("\n")
    }

    /// The log lines written to stderr so far.
    pub fn logged(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }

    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill").args([signal, &self.child.id().to_string()]).status().expect("kill runs");
        assert!(status.success());
    }

    pub fn wait(&mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = std::time::Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().expect("the child's status") {
                return status;
            }
            assert!(std::time::Instant::now() < deadline, "the sandbox did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
