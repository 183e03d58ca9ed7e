//! The database a test runs on. Every suite that runs against SQLite runs against PostgreSQL
//! too: [`on_both_backends!`](crate::on_both_backends) runs each of its tests twice, once within
//! [`on`] each backend, and a test then gets a fresh database on a throwaway PostgreSQL server
//! ([`postgres`]) or a fresh SQLite file. A test outside it runs on SQLite.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

tokio::task_local! {
    static CHOSEN: Backend;
}

/// Runs `test` on `backend`: within it, [`backend`] answers `backend`.
pub async fn on<T>(backend: Backend, test: impl Future<Output = T>) -> T {
    CHOSEN.scope(backend, test).await
}

/// The backend of the test running: the one [`on`] chose, else SQLite.
pub fn backend() -> Backend {
    CHOSEN.try_with(|backend| *backend).unwrap_or(Backend::Sqlite)
}

/// A fresh, empty database of the test's backend, removed with the test process (SQLite: a
/// file in a temporary directory, gone when this is dropped).
pub struct TestDatabase {
    /// What `--database` takes: a file path or a `postgres://` URL.
    pub location: String,
    _dir: Option<tempfile::TempDir>,
}

impl TestDatabase {
    pub fn fresh() -> Self {
        match backend() {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("a temporary directory");
                let path = dir.path().join("sandbox.db");
                Self { location: path.to_str().expect("a UTF-8 path").to_owned(), _dir: Some(dir) }
            }
            Backend::Postgres => Self { location: postgres().fresh_database(), _dir: None },
        }
    }

    /// Whether `needle` is anywhere in the stored data: the SQLite file's bytes, or a dump of
    /// the PostgreSQL database.
    pub fn holds(&self, needle: &[u8]) -> bool {
        let stored = if self.location.starts_with("postgres://") {
            let dump = Command::new(postgres().bin.join("pg_dump"))
                .args(["--data-only", "--no-owner", &self.location])
                .output()
                .expect("pg_dump runs");
            assert!(dump.status.success(), "pg_dump: {}", String::from_utf8_lossy(&dump.stderr));
            dump.stdout
        } else {
            std::fs::read(&self.location).expect("the database file")
        };
        stored.windows(needle.len()).any(|w| w == needle)
    }
}

/// A connection to the PostgreSQL database at `url`, driven by a task of its own.
pub async fn connect_postgres(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("the database answers");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// Every balance equals the sum of its ledger entries and none is negative, read from the
/// database itself (not through the sandbox).
pub async fn assert_ledger_reconciles(location: &str) {
    const CHECK: &str = "SELECT COUNT(*),
            CAST(COALESCE(SUM(CASE WHEN b.amount != COALESCE((SELECT SUM(delta) FROM ledger l
                                                              WHERE l.balance_id = b.id), 0)
                              THEN 1 ELSE 0 END), 0) AS BIGINT),
            CAST(COALESCE(SUM(CASE WHEN b.amount < 0 THEN 1 ELSE 0 END), 0) AS BIGINT)
         FROM balances b";
    let (balances, mismatched, negative): (i64, i64, i64) = if location.starts_with("postgres://") {
        let row = connect_postgres(location).await.query_one(CHECK, &[]).await.expect("a count");
        (row.get(0), row.get(1), row.get(2))
    } else {
        let connection = rusqlite::Connection::open_with_flags(location, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("the database opens read-only");
        connection.query_row(CHECK, [], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?))).expect("a count")
    };
    assert!(balances > 0, "there are balances to check");
    assert_eq!(mismatched, 0, "every balance equals the sum of its ledger entries");
    assert_eq!(negative, 0, "no balance is negative");
}

/// A PostgreSQL server for this test process: `PAYMENTS_TEST_DATABASE_URL` when set (a server
/// where that role may create databases), else a throwaway one (`scripts/throwaway-postgres`)
/// started on first use on a free port, and stopped and removed when the test process ends.
pub struct Postgres {
    /// The maintenance database's URL, where databases are created.
    admin: String,
    /// Where PostgreSQL's programs are (`pg_dump`).
    bin: PathBuf,
    /// Held until the process ends: its stdin's closing tells the script to stop the server (it
    /// outlives this process to do so, so it is never waited for).
    _keeper: Option<(Child, ChildStdin)>,
}

pub fn postgres() -> &'static Postgres {
    static SERVER: OnceLock<Postgres> = OnceLock::new();
    SERVER.get_or_init(|| match std::env::var("PAYMENTS_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => Postgres { admin: url, bin: PathBuf::new(), _keeper: None },
        _ => start_postgres(),
    })
}

/// Starts the throwaway server. Without PostgreSQL the script fails, and so does the test:
/// these tests never skip.
fn start_postgres() -> Postgres {
    start_throwaway().0
}

/// A throwaway server, and its data directory and port.
fn start_throwaway() -> (Postgres, PathBuf, u16) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/throwaway-postgres");
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let mut keeper = Command::new(&script)
        .arg(port.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} runs: {e}", script.display()));
    let mut ready = String::new();
    BufReader::new(keeper.stdout.take().expect("the script's stdout")).read_line(&mut ready).expect("it answers");
    let mut words = ready.split_whitespace();
    let (Some("ready"), Some(admin), Some(bin), Some(data)) = (words.next(), words.next(), words.next(), words.next())
    else {
        panic!(
            "PostgreSQL did not start (its error is above): install it (Debian: apt-get install postgresql) or set \
             PAYMENTS_TEST_DATABASE_URL"
        )
    };
    let stdin = keeper.stdin.take().expect("the script's stdin");
    let server = Postgres { admin: admin.to_owned(), bin: PathBuf::from(bin), _keeper: Some((keeper, stdin)) };
    (server, PathBuf::from(data), port)
}

/// A PostgreSQL server of a test's own, which it may stop and start again (an outage): always a
/// throwaway one, whatever `PAYMENTS_TEST_DATABASE_URL` says.
pub struct OwnPostgres {
    pub server: Postgres,
    data: PathBuf,
    port: u16,
}

impl OwnPostgres {
    pub fn start() -> Self {
        let (server, data, port) = start_throwaway();
        Self { server, data, port }
    }

    /// Runs `pg_ctl` with `arguments` on this server's data, as the `postgres` user when root
    /// (as the script does).
    fn pg_ctl(&self, arguments: &[&str]) {
        let pg_ctl = self.server.bin.join("pg_ctl");
        let mut command = if is_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&pg_ctl);
            command
        } else {
            Command::new(&pg_ctl)
        };
        let status = command.arg("-D").arg(&self.data).args(arguments).status().expect("pg_ctl runs");
        assert!(status.success(), "pg_ctl {arguments:?} failed");
    }

    /// Stops the server as an administrator would: its sessions are ended, their transactions
    /// rolled back.
    pub fn stop(&self) {
        self.pg_ctl(&["-m", "fast", "-w", "stop"]);
    }

    /// Starts it again where it was.
    pub fn start_again(&self) {
        let sockets = self.data.parent().expect("the data directory's parent").display().to_string();
        let log = format!("{sockets}/log");
        let options = format!("-p {} -k {sockets} -c listen_addresses=127.0.0.1 -c max_connections=300", self.port);
        self.pg_ctl(&["-l", &log, "-w", "-t", "60", "start", "-o", &options]);
    }
}

/// Whether this process runs as root (PostgreSQL's programs then run as `postgres`).
fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|out| out.stdout.starts_with(b"0\n"))
}

impl Postgres {
    /// A new empty database's URL.
    pub fn fresh_database(&self) -> String {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("sandbox_{}_{}", std::process::id(), COUNT.fetch_add(1, Ordering::Relaxed));
        let admin = self.admin.clone();
        let create = name.clone();
        // Its own thread and runtime: callers may be inside a runtime or not.
        std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime").block_on(async {
                let connection = connect_postgres(&admin).await;
                connection.batch_execute(&format!("CREATE DATABASE {create}")).await.expect("a database is created");
            })
        })
        .join()
        .expect("the database is created");
        let (url, parameters) = self.admin.split_once('?').unwrap_or((&self.admin, ""));
        let (base, _) = url.rsplit_once('/').expect("a URL with a database");
        if parameters.is_empty() { format!("{base}/{name}") } else { format!("{base}/{name}?{parameters}") }
    }

    pub fn bin(&self) -> &Path {
        &self.bin
    }
}
