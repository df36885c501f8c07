//! Stopping a run early, cleanly: a signal (SIGINT, SIGTERM) or a lost cluster peer.
//!
//! Whoever notices the reason calls [`request`] — the command's signal thread, or the
//! panic hook that [`watch_cluster_failures`] installs for timely's network threads.
//! From then on:
//!
//! * the timeline driver ([`crate::drive::feed`]) stops before the next time point and
//!   returns [`crate::drive::RunError::Interrupted`] or `Cluster`, so the output of every
//!   completed time point is written and flushed and nothing after it;
//! * a reader blocked on a live stream wakes up: [`Interruptible`] reads on its own thread
//!   and its `read` returns as soon as a stop is requested, even with no input pending.
//!
//! The state is process-wide (signals are), and the first reason wins until [`clear`]
//! (a library that runs one run after another in its process, as the Python package
//! does, clears it between them).

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once, OnceLock};

use crossbeam_channel::{Receiver, Sender, bounded, select};

/// Why a run stops early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// A signal, by number (2 = SIGINT, 15 = SIGTERM).
    Signal(i32),
    /// A cluster peer was lost; the message says how.
    Cluster(String),
}

static REQUESTED: AtomicBool = AtomicBool::new(false);
static REASON: Mutex<Option<Stop>> = Mutex::new(None);

/// A channel that nothing is sent on: its sender is dropped when a stop is requested.
type Wake = (Option<Sender<()>>, Receiver<()>);

/// Disconnected (its sender dropped) once a stop is requested: every receiver wakes.
fn wake() -> &'static Mutex<Wake> {
    static WAKE: OnceLock<Mutex<Wake>> = OnceLock::new();
    WAKE.get_or_init(|| Mutex::new(channel()))
}

fn channel() -> Wake {
    let (sender, receiver) = bounded(0);
    (Some(sender), receiver)
}

/// The receiver that wakes when a stop is requested.
fn woken() -> Receiver<()> {
    wake().lock().unwrap_or_else(|e| e.into_inner()).1.clone()
}

/// Asks the run to stop; the first reason is kept.
pub fn request(stop: Stop) {
    {
        let mut reason = REASON.lock().unwrap_or_else(|e| e.into_inner());
        if reason.is_none() {
            *reason = Some(stop);
        }
    }
    REQUESTED.store(true, Ordering::SeqCst);
    drop(wake().lock().unwrap_or_else(|e| e.into_inner()).0.take());
}

/// Forgets a stop request once its run has ended, so that the next run of the process
/// runs: nothing may be running.
pub fn clear() {
    *REASON.lock().unwrap_or_else(|e| e.into_inner()) = None;
    *wake().lock().unwrap_or_else(|e| e.into_inner()) = channel();
    REQUESTED.store(false, Ordering::SeqCst);
}

static LISTENING: AtomicBool = AtomicBool::new(false);

/// While the returned guard lives, a stop request is honoured by the running driver;
/// outside it (compiling, printing a summary) a signal handler should end the process at
/// once, since nothing would notice the request.
pub fn listen() -> Listening {
    LISTENING.store(true, Ordering::SeqCst);
    Listening(())
}

/// Whether a run is listening for stop requests (see [`listen`]).
pub fn listening() -> bool {
    LISTENING.load(Ordering::SeqCst)
}

/// See [`listen`].
#[derive(Debug)]
pub struct Listening(());

impl Drop for Listening {
    fn drop(&mut self) {
        LISTENING.store(false, Ordering::SeqCst);
    }
}

/// Why the run should stop, if it should. A relaxed load when it should not: cheap
/// enough to ask at every time point.
pub fn requested() -> Option<Stop> {
    if !REQUESTED.load(Ordering::Relaxed) {
        return None;
    }
    REASON.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Installs (once) a panic hook that turns the panics of timely's network threads —
/// which is how timely reports a peer that died or closed its connection — into a
/// [`Stop::Cluster`] request, without printing a backtrace. Every other panic goes to the
/// hook that was installed before.
pub fn watch_cluster_failures() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("");
            if let Some(cause) = message.strip_prefix("timely communication error: ") {
                request(Stop::Cluster(format!(
                    "lost the connection to a cluster peer ({cause}); the peer process died or closed its connection"
                )));
            } else if is_cascade(message) && requested().is_some() {
                // The same failure reaching the workers and the network guards.
            } else {
                previous(info);
            }
        }));
    });
}

/// The panics a lost peer causes after the network thread's own.
fn is_cascade(message: &str) -> bool {
    message.starts_with("MergeQueue poisoned")
        || message.starts_with("Send thread panic")
        || message.starts_with("Recv thread panic")
        || message.contains("MergeQueue mutex poisoned")
}

/// A reader on its own thread, so that a read blocked on a live stream returns when a
/// stop is requested: `read` then fails (with [`io::ErrorKind::Other`]), which the driver
/// reports as the stop, not as an input error, because it asks [`requested`] first.
///
/// The thread starts on the first `read`, so an unused stdin is never read.
#[derive(Debug)]
pub struct Interruptible<R: Read + Send + 'static> {
    inner: Option<R>,
    chunks: Option<Receiver<io::Result<Vec<u8>>>>,
    current: Vec<u8>,
    at: usize,
}

impl<R: Read + Send + 'static> Interruptible<R> {
    pub fn new(inner: R) -> Interruptible<R> {
        Interruptible {
            inner: Some(inner),
            chunks: None,
            current: Vec::new(),
            at: 0,
        }
    }

    fn chunks(&mut self) -> io::Result<&Receiver<io::Result<Vec<u8>>>> {
        if self.chunks.is_none() {
            let Some(mut inner) = self.inner.take() else {
                return Err(io::Error::other("the reader thread could not start"));
            };
            let (sender, receiver) = bounded(16);
            std::thread::Builder::new()
                .name("stgflow:stdin".to_owned())
                .spawn(move || {
                    loop {
                        let mut buffer = vec![0; 1 << 16];
                        let chunk = match inner.read(&mut buffer) {
                            Ok(0) => break,
                            Ok(n) => {
                                buffer.truncate(n);
                                Ok(buffer)
                            }
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                            Err(e) => Err(e),
                        };
                        let failed = chunk.is_err();
                        if sender.send(chunk).is_err() || failed {
                            break;
                        }
                    }
                })?;
            self.chunks = Some(receiver);
        }
        self.chunks
            .as_ref()
            .ok_or_else(|| io::Error::other("the reader thread could not start"))
    }
}

impl<R: Read + Send + 'static> Read for Interruptible<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.current.len() {
            // Not `Interrupted`: `BufRead` retries those.
            let stopped = || io::Error::other("the run was stopped");
            if requested().is_some() {
                return Err(stopped());
            }
            let chunks = self.chunks()?.clone();
            let wake = woken();
            let chunk = select! {
                recv(chunks) -> chunk => chunk,
                recv(wake) -> _ => return Err(stopped()),
            };
            match chunk {
                // The thread ended: end of input.
                Err(_) => return Ok(0),
                Ok(chunk) => {
                    self.current = chunk?;
                    self.at = 0;
                }
            }
        }
        let n = out.len().min(self.current.len() - self.at);
        out[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}
