//! nginx (Debian's) as the load balancer in front of sandbox instances, configured as the
//! README's "Several instances" recipe says. Never skipped: without nginx the test fails and
//! says how to install it (`.ci/run` does).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An nginx in front of `upstreams`, stopped when dropped.
pub struct Nginx {
    pub addr: SocketAddr,
    child: Child,
    _dir: tempfile::TempDir,
}

fn binary() -> PathBuf {
    ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|path| path.exists())
        .unwrap_or_else(|| panic!("nginx is not installed: apt-get install nginx-light (Debian), as .ci/run does"))
}

impl Nginx {
    pub fn start(upstreams: &[SocketAddr]) -> Self {
        let dir = tempfile::tempdir().expect("a directory for nginx");
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let servers: String = upstreams.iter().map(|addr| format!("        server {addr};\n")).collect();
        let root = dir.path().display();
        // As the README recipe: the client's address appended to X-Forwarded-For, connections
        // enough for clients that hold many, and their heads given 10 s.
        let config = format!(
            r#"worker_processes 1;
daemon off;
master_process off;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 8192; }}
http {{
    access_log off;
    client_body_temp_path {root}/body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    client_header_timeout 10s;
    client_body_timeout 10s;
    upstream sandboxes {{
{servers}        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://sandboxes;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
        }}
    }}
}}
"#
        );
        let path = dir.path().join("nginx.conf");
        std::fs::write(&path, config).expect("nginx.conf written");
        let child = Command::new(binary())
            .args(["-p", &root.to_string(), "-c", &path.display().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("nginx starts");
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < deadline, "nginx did not listen on {addr}: see {root}/error.log");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { addr, child, _dir: dir }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
