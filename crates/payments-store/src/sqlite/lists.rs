//! List pages on threads of their own, at a lower CPU priority than the rest of the process.
//!
//! A filtered list or a search costs SQLite tenths of a millisecond to a few milliseconds; a
//! payment costs microseconds on the runtime plus its share of the one writer thread. When the
//! cores are busy, clients listing back to back took CPU from every tenant's payments, even
//! with lists on the runtime's workers bounded to one at a time (BENCHMARKS.md, *Why, measured:
//! SQLite list pages on niced threads*). Here lists run on a few
//! threads niced to 10: they get the CPU the payments leave, and all of it when nothing else
//! runs. A task waits for its page without holding a worker.
//!
//! Lowering a thread's priority is a C call (`setpriority`) with no safe wrapper in the
//! standard library, which is why this module allows `unsafe` code.
#![allow(unsafe_code)]

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::readers::Readers;
use crate::{Result, StoreError};

type Job = Box<dyn FnOnce(&Readers) + Send>;

/// How much lower the list threads' priority is: CFS gives a thread of nice 10 about a tenth of
/// the CPU a thread of nice 0 gets when both want it, and no less than that.
const NICE: i32 = 10;

pub(super) struct Lists {
    jobs: Option<mpsc::Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

impl Lists {
    /// `threads` threads reading lists through `readers`.
    pub(super) fn start(readers: Arc<Readers>, threads: usize) -> std::result::Result<Self, crate::OpenError> {
        let (sender, receiver) = mpsc::channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        let threads = (0..threads)
            .map(|i| {
                let (readers, receiver) = (readers.clone(), receiver.clone());
                std::thread::Builder::new().name(format!("sqlite-lists-{i}")).spawn(move || {
                    lower_priority();
                    loop {
                        // The lock is held only while waiting for the next job.
                        let job = receiver.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        match job {
                            Ok(job) => job(&readers),
                            Err(mpsc::RecvError) => return,
                        }
                    }
                })
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| crate::OpenError::failed("cannot start the list threads", e))?;
        Ok(Self { jobs: Some(sender), threads })
    }

    /// Runs `read` on a list thread and waits for its result.
    pub(super) async fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Readers) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let (done, result) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |readers| {
            let _ = done.send(read(readers));
        });
        let gone = || StoreError::Stopped("the list threads have stopped");
        self.jobs.as_ref().ok_or_else(gone)?.send(job).map_err(|_| gone())?;
        result.await.map_err(|_| gone())?
    }
}

impl Drop for Lists {
    /// Ends the threads (their read connections close with them) before the store's writer
    /// closes the last connection, which removes the WAL.
    fn drop(&mut self) {
        self.jobs.take();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Lowers the calling thread's priority. On Linux a nice value belongs to a thread, and
/// `setpriority(PRIO_PROCESS, 0, ..)` sets the calling thread's; lowering needs no privilege.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority takes plain integers and touches no memory of ours.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, NICE);
    }
}
