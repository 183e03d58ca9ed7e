//! The upload figure of `cargo xtask bench`: a large multipart upload through a generated server
//! (`upload-server`, the multipart sample's server, which spools files to temporary files and
//! reads them back), with the server's resident memory sampled from `/proc` the whole time. The
//! target: the peak within 32 MiB of where it started, whatever the upload's size.

use anyhow::{Context, bail};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub(crate) struct Upload {
    pub bytes: u64,
    pub seconds: f64,
    /// Resident memory (MiB): before, and the peak while the upload went on.
    pub before: f64,
    pub peak: f64,
}

/// Builds and starts the upload server, uploads a file of `bytes` bytes, and measures.
pub(crate) fn measure(root: &Path, bytes: u64, release: bool) -> anyhow::Result<Upload> {
    eprintln!("== a {} MiB upload through a generated server", bytes >> 20);
    let binary =
        crate::cargo_build(root, &["--package", "openapi-workspace-output", "--bin", "upload-server"], release)?
            .join("upload-server");
    let mut server =
        Command::new(&binary).stdout(Stdio::piped()).spawn().with_context(|| binary.display().to_string())?;
    let mut address = String::new();
    let mut stdout = server.stdout.take().expect("piped");
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte)? == 1 && byte[0] != b'\n' {
        address.push(byte[0] as char);
    }
    let pid = server.id();
    let measured = (|| {
        let before = resident(pid)?;
        let done = AtomicBool::new(false);
        let (peak, answer, seconds) = std::thread::scope(|scope| {
            let sampler = scope.spawn(|| {
                let mut peak = 0f64;
                while !done.load(Ordering::Relaxed) {
                    peak = peak.max(resident(pid).unwrap_or(0.0));
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                peak
            });
            let start = Instant::now();
            let answer = send(&address, bytes);
            let seconds = start.elapsed().as_secs_f64();
            done.store(true, Ordering::Relaxed);
            (sampler.join().expect("the sampler"), answer, seconds)
        });
        let answer = answer?;
        if !answer.starts_with("HTTP/1.1 201") || !answer.contains(&format!("\"size\":{bytes}")) {
            bail!("the upload was not received whole: {}", answer.lines().next().unwrap_or_default());
        }
        Ok(Upload { bytes, seconds, before, peak: peak.max(before) })
    })();
    let _ = server.kill();
    let _ = server.wait();
    measured
}

/// Posts a multipart body with a title and a file of `bytes` zero bytes, written 256 KiB at a
/// time; answers the response.
fn send(address: &str, bytes: u64) -> anyhow::Result<String> {
    let boundary = "bench-upload-boundary";
    let head = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nbench\r\n--{boundary}\r\n\
         Content-Disposition: form-data; name=\"file\"; filename=\"zeros.pdf\"\r\nContent-Type: application/pdf\r\n\r\n"
    );
    let tail = format!("\r\n--{boundary}--\r\n");
    let length = head.len() as u64 + bytes + tail.len() as u64;
    let mut stream = TcpStream::connect(address)?;
    write!(
        stream,
        "POST /documents HTTP/1.1\r\nHost: bench\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n\
         Content-Length: {length}\r\nConnection: close\r\n\r\n{head}"
    )?;
    let chunk = vec![0u8; 256 * 1024];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        stream.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    stream.write_all(tail.as_bytes())?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}

/// A process's resident memory (VmRSS), in MiB.
fn resident(pid: u32) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .context("VmRSS in /proc/<pid>/status")?;
    Ok(kib / 1024.0)
}

/// The "# Uploads" section of BENCHMARKS.md.
pub(crate) fn render(upload: &Upload) -> String {
    let grew = upload.peak - upload.before;
    format!(
        "# Uploads\n\nA {:.0} MiB file uploaded as a `multipart/form-data` part to a generated server (`upload-server`, \
         the multipart sample's server, which writes each file to a temporary file as it arrives and reads it back \
         to its end), in {:.1} s ({:.0} MiB/s): its resident memory {:.1} MiB before, **{:.1} MiB at the most** \
         while the upload went on, sampled every 10 ms: **{:+.1} MiB** (target within 32 MiB: {}).\n\n",
        upload.bytes as f64 / 1048576.0,
        upload.seconds,
        upload.bytes as f64 / 1048576.0 / upload.seconds,
        upload.before,
        upload.peak,
        grew,
        if grew <= 32.0 { "met" } else { "**missed**" },
    )
}
