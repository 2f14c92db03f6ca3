//! A small HTTP/1.1 server on 127.0.0.1 for the chart fetching tests: a
//! Helm repository (`index.yaml` and archives) or an OCI registry (the
//! `/v2/` calls gitops-lint makes), answering from a handler the test
//! gives, counting every request. Stopped when dropped.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// One request as the handler sees it.
pub struct Request {
    pub path: String,
    pub headers: Vec<(String, String)>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One response.
#[derive(Default)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Wait this long before answering.
    pub delay: Option<Duration>,
    /// Announce this length instead of the body's (an oversize reply).
    pub claimed_length: Option<u64>,
}

impl Response {
    pub fn ok(body: impl Into<Vec<u8>>) -> Response {
        Response {
            status: 200,
            body: body.into(),
            ..Response::default()
        }
    }
    pub fn status(status: u16) -> Response {
        Response {
            status,
            ..Response::default()
        }
    }
    pub fn with_header(mut self, k: &str, v: &str) -> Response {
        self.headers.push((k.to_string(), v.to_string()));
        self
    }
}

type Handler = dyn Fn(&Request) -> Response + Send + Sync;

pub struct Server {
    pub port: u16,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    accepting: Option<JoinHandle<()>>,
    open: Arc<AtomicUsize>,
}

impl Server {
    /// Starts serving on a free port of 127.0.0.1.
    pub fn start(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let open = Arc::new(AtomicUsize::new(0));
        let handler: Arc<Handler> = Arc::new(handler);
        let accepting = {
            let (requests, stop, open) =
                (Arc::clone(&requests), Arc::clone(&stop), Arc::clone(&open));
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let (requests, handler, open) = (
                        Arc::clone(&requests),
                        Arc::clone(&handler),
                        Arc::clone(&open),
                    );
                    open.fetch_add(1, Ordering::SeqCst);
                    std::thread::spawn(move || {
                        serve(conn, &requests, handler.as_ref());
                        open.fetch_sub(1, Ordering::SeqCst);
                    });
                }
            })
        };
        Server {
            port,
            requests,
            stop,
            accepting: Some(accepting),
            open,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The paths requested so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("requests").clone()
    }

    /// Forgets the requests counted so far.
    pub fn reset(&self) {
        self.requests.lock().expect("requests").clear();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so it sees `stop`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(h) = self.accepting.take() {
            let _ = h.join();
        }
        // Connections still open (a delayed reply) end on their own.
        let _ = self.open.load(Ordering::SeqCst);
    }
}

fn serve(conn: TcpStream, requests: &Mutex<Vec<String>>, handler: &Handler) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(match conn.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.trim_end().split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut body = vec![0u8; length.min(1 << 20)];
    let _ = reader.read_exact(&mut body);
    requests.lock().expect("requests").push(path.clone());
    let resp = handler(&Request { path, headers });
    if let Some(d) = resp.delay {
        std::thread::sleep(d);
    }
    let mut out = conn;
    let mut head = format!(
        "HTTP/1.1 {} X\r\nConnection: close\r\nContent-Length: {}\r\n",
        resp.status,
        resp.claimed_length.unwrap_or(resp.body.len() as u64)
    );
    for (k, v) in &resp.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(&resp.body);
    let _ = out.flush();
}
