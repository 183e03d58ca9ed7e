//! Where log lines go on their way to stderr: a buffer that request threads append to, and a
//! thread of its own that writes what has gathered every few milliseconds, in one system call.
//!
//! Every request is logged, so a log line must cost a request almost nothing. Handing each line
//! to a writer thread through a channel (`tracing_appender`) woke that thread once per line or
//! so: a write, a futex and often a `sched_yield` per request, which measured at 60,000
//! `GET /currencies` a second were more of the sandbox's CPU than its handler. Here a line is a
//! copy into the buffer under a lock held for that copy; the writer wakes on its own clock.
//!
//! Nothing is dropped: past [`URGENT`] bytes waiting the writer is woken at once, and past
//! [`FULL`] a request waits for it (stderr that nobody reads holds requests back, not memory).
//! Lines still waiting when the process ends are written by [`Flush`]'s drop; a process killed
//! outright loses at most the last [`INTERVAL`] of lines.

use std::cell::RefCell;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

pub use crate::log_format::AccessLine;
use crate::log_format::{ACCESS_TARGET, LogFormat};

/// How long lines wait at most before they are written.
const INTERVAL: Duration = Duration::from_millis(10);
/// Waiting bytes past which the writer is woken before its time.
const URGENT: usize = 256 * 1024;
/// Waiting bytes past which a line waits for the writer.
const FULL: usize = 16 * 1024 * 1024;

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// The writer waits on it for [`INTERVAL`] or to be woken; a full buffer's callers wait on
    /// it for the writer to have taken the buffer.
    changed: Condvar,
}

#[derive(Default)]
struct State {
    waiting: Vec<u8>,
    closed: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What `tracing_subscriber` writes lines to (`with_writer`).
#[derive(Clone)]
pub struct Logs {
    shared: Arc<Shared>,
}

/// Writes what is left and stops the writer when dropped (at the end of `main`).
pub struct Flush {
    shared: Arc<Shared>,
    writer: Option<JoinHandle<()>>,
}

/// Starts the writer thread, writing to `out`.
pub fn to(out: impl Write + Send + 'static) -> std::io::Result<(Logs, Flush)> {
    let shared = Arc::new(Shared::default());
    let writer = {
        let shared = shared.clone();
        std::thread::Builder::new().name("log-writer".into()).spawn(move || write_out(&shared, out))?
    };
    Ok((Logs { shared: shared.clone() }, Flush { shared, writer: Some(writer) }))
}

fn write_out(shared: &Shared, mut out: impl Write) {
    let mut taken = Vec::new();
    loop {
        let closed = {
            let mut state = shared.lock();
            if state.waiting.len() < URGENT && !state.closed {
                state = shared.changed.wait_timeout(state, INTERVAL).unwrap_or_else(|p| p.into_inner()).0;
            }
            std::mem::swap(&mut taken, &mut state.waiting);
            state.closed
        };
        shared.changed.notify_all();
        if !taken.is_empty() {
            // Nowhere to report a failed write to: the line is gone either way.
            let _ = out.write_all(&taken).and_then(|()| out.flush());
            taken.clear();
        }
        if closed {
            return;
        }
    }
}

impl Drop for Flush {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.changed.notify_all();
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

impl Logs {
    /// Adds `line` to what the writer writes next.
    fn append(&self, line: &[u8]) {
        let mut state = self.shared.lock();
        while state.waiting.len() >= FULL && !state.closed {
            state = self.shared.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        state.waiting.extend_from_slice(line);
        if state.waiting.len() >= URGENT {
            drop(state);
            self.shared.changed.notify_all();
        }
    }
}

impl Write for Logs {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        self.append(line);
        Ok(line.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Logs;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// Where the access log's lines go without passing through `tracing` (see
/// [`LogFormat::access_line`]): the subscriber's own writer and layout, set by the binary once
/// it has made the global subscriber. Unset (a sandbox run inside another program, the tests),
/// the edge logs through `tracing` as any other line.
static ACCESS: OnceLock<Option<(LogFormat, Logs)>> = OnceLock::new();

/// The access log's lines go to `logs` in `format` from now on, if `RUST_LOG` lets them through
/// (the binary's `main`, once its subscriber is set: the filter does not change after, so it is
/// asked once here rather than on every request).
pub fn write_access_lines(format: LogFormat, logs: Logs) {
    let wanted = tracing::enabled!(target: ACCESS_TARGET, tracing::Level::INFO);
    let _ = ACCESS.set(wanted.then_some((format, logs)));
}

/// Writes a request's `line` in the access log: directly where the binary has said where
/// ([`write_access_lines`]), else as a `tracing` event.
pub(crate) fn access(line: &AccessLine<'_>) {
    thread_local! {
        static LINE: RefCell<String> = const { RefCell::new(String::new()) };
    }
    match ACCESS.get() {
        None => line.event(),
        Some(None) => {}
        Some(Some((format, logs))) => LINE.with_borrow_mut(|text| {
            text.clear();
            if format.access_line(line, text).is_ok() {
                logs.append(text.as_bytes());
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink whose contents the test can read.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_line_is_written_whole_and_in_order_by_the_time_it_is_flushed() {
        let sink = Sink::default();
        let (logs, flush) = to(sink.clone()).unwrap();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let mut logs = logs.clone();
                std::thread::spawn(move || {
                    for i in 0..50_000 {
                        logs.write_all(format!("thread {t} line {i}\n").as_bytes()).unwrap();
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        drop(flush);
        let written = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        for t in 0..4 {
            let mine: Vec<&str> = written.lines().filter(|l| l.starts_with(&format!("thread {t} "))).collect();
            let expected: Vec<String> = (0..50_000).map(|i| format!("thread {t} line {i}")).collect();
            assert_eq!(mine, expected, "thread {t}'s lines");
        }
        assert_eq!(written.lines().count(), 200_000);
    }

    #[test]
    fn a_line_is_written_within_the_interval_without_a_flush() {
        let sink = Sink::default();
        let (mut logs, _flush) = to(sink.clone()).unwrap();
        logs.write_all(b"alone\n").unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while sink.0.lock().unwrap().is_empty() {
            assert!(std::time::Instant::now() < deadline, "the line was not written");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(sink.0.lock().unwrap().as_slice(), b"alone\n");
    }
}
