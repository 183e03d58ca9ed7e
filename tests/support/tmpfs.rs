//! A small file system of a test's own that it can fill up (a full disk): a tmpfs, mounted by
//! the test. Mounting needs root (or `sudo` without a password); without
//! either the test fails and says so, it never skips. Unmounted when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Tmpfs {
    dir: tempfile::TempDir,
}

/// `mount`/`umount` as root: directly when this process is root, else through `sudo -n`.
fn as_root(program: &str, arguments: &[&str]) -> std::process::ExitStatus {
    let root = Command::new("id").arg("-u").output().is_ok_and(|out| out.stdout.starts_with(b"0\n"));
    let mut command = if root {
        Command::new(program)
    } else {
        let mut sudo = Command::new("sudo");
        sudo.args(["-n", program]);
        sudo
    };
    command.args(arguments).status().unwrap_or_else(|e| panic!("{program} runs: {e}"))
}

impl Tmpfs {
    /// A tmpfs of `mebibytes` MiB.
    pub fn mount(mebibytes: u32) -> Self {
        let dir = tempfile::tempdir().expect("a mount point");
        let path = dir.path().to_str().expect("a UTF-8 path").to_owned();
        let status = as_root("mount", &["-t", "tmpfs", "-o", &format!("size={mebibytes}m,mode=0777"), "tmpfs", &path]);
        assert!(
            status.success(),
            "mounting a tmpfs needs root (or sudo without a password): run the tests as root, as CI does"
        );
        Self { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills what is left of it with a file of zeroes (`filler`), until the file system says it
    /// is full; returns the file's path.
    pub fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.path().join("filler");
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path).expect("the filler opens");
        let block = vec![0u8; 4096];
        loop {
            match file.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(error) if error.raw_os_error() == Some(28) => break, // ENOSPC
                Err(error) => panic!("filling {}: {error}", path.display()),
            }
        }
        // What is left after a partial block.
        let _ = file.write(&block[..1]);
        let _ = file.sync_all();
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let path = self.path().to_str().unwrap_or_default().to_owned();
        // Lazily: a process still holding a file there lets go later.
        let _ = as_root("umount", &["-l", &path]);
    }
}
