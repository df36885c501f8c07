//! Connecting a cluster's processes: each dials the ones before it and accepts the ones
//! after it, and both sides exchange a greeting ([`Hello`]) before timely's networking
//! takes the sockets over. Timely's own setup prints to stdout and retries forever; this
//! one is quiet, gives up after a timeout, and says what is wrong (a stray program on a
//! port, a peer started with another `-n` or `-w`).

use stgflow_io::drive::RunError;

/// What a process says when it connects to another, and the answer it expects: a magic
/// word, then its index, the number of processes and the worker threads per process.
/// A stray program on a listed port, or a process started with other `-n`/`-w`, is found
/// here, with a message, instead of hanging timely's setup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hello {
    index: u64,
    processes: u64,
    workers: u64,
}

impl Hello {
    const MAGIC: [u8; 8] = *b"stgflow1";

    fn bytes(self) -> [u8; 32] {
        let mut out = [0u8; 32];
        out[..8].copy_from_slice(&Hello::MAGIC);
        out[8..16].copy_from_slice(&self.index.to_le_bytes());
        out[16..24].copy_from_slice(&self.processes.to_le_bytes());
        out[24..].copy_from_slice(&self.workers.to_le_bytes());
        out
    }

    /// Reads a hello from `stream` before `deadline`.
    fn read(
        stream: &mut std::net::TcpStream,
        deadline: std::time::Instant,
    ) -> Result<Hello, String> {
        use std::io::Read;
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        stream
            .set_read_timeout(Some(left.max(std::time::Duration::from_millis(10))))
            .map_err(|e| e.to_string())?;
        let mut bytes = [0u8; 32];
        stream.read_exact(&mut bytes).map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                "no answer in time".to_owned()
            }
            std::io::ErrorKind::UnexpectedEof => "the connection was closed".to_owned(),
            _ => e.to_string(),
        })?;
        stream.set_read_timeout(None).map_err(|e| e.to_string())?;
        if bytes[..8] != Hello::MAGIC {
            return Err("it is not an stgflow process of this version".to_owned());
        }
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[i..i + 8]);
            u64::from_le_bytes(w)
        };
        Ok(Hello {
            index: word(8),
            processes: word(16),
            workers: word(24),
        })
    }

    /// Why `other` cannot join this cluster, if it cannot.
    fn mismatch(self, other: Hello) -> Option<String> {
        if other.processes != self.processes {
            Some(format!(
                "it runs with -n {} and this process with -n {}",
                other.processes, self.processes
            ))
        } else if other.workers != self.workers {
            Some(format!(
                "it runs with -w {} and this process with -w {}; every process needs the same -w",
                other.workers, self.workers
            ))
        } else {
            None
        }
    }
}

/// Connects this process to every other: it dials the processes before it and accepts the
/// ones after it, exchanging a [`Hello`] with each. Timely's own setup prints progress to
/// stdout and retries forever; this one is quiet and gives up after `timeout` with a
/// message naming the process it waited for.
pub(super) fn connect(
    addresses: &[String],
    me: usize,
    workers: usize,
    timeout: std::time::Duration,
) -> Result<Vec<Option<std::net::TcpStream>>, RunError> {
    use std::net::{TcpListener, TcpStream};
    let deadline = std::time::Instant::now() + timeout;
    let hello = Hello {
        index: me as u64,
        processes: addresses.len() as u64,
        workers: workers as u64,
    };
    let listener = if me + 1 < addresses.len() {
        let listener = TcpListener::bind(&addresses[me]).map_err(|e| {
            RunError::Cluster(format!(
                "process {me} cannot listen on {}: {e}",
                addresses[me]
            ))
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|e| RunError::Cluster(format!("process {me}: {e}")))?;
        Some(listener)
    } else {
        None
    };
    let mut sockets: Vec<Option<TcpStream>> = (0..addresses.len()).map(|_| None).collect();
    let connecting = Connecting {
        addresses,
        me,
        hello,
        deadline,
        timeout,
    };
    dial(&connecting, &mut sockets)?;
    if let Some(listener) = listener {
        accept(&connecting, listener, &mut sockets)?;
    }
    Ok(sockets)
}

/// What dialing and accepting both go by: the cluster's addresses, this process's index
/// and greeting, and when to give up.
struct Connecting<'a> {
    addresses: &'a [String],
    me: usize,
    hello: Hello,
    deadline: std::time::Instant,
    timeout: std::time::Duration,
}

/// Dials the processes before this one (`me`), greeting each; their sockets go into
/// `sockets`.
fn dial(
    connecting: &Connecting<'_>,
    sockets: &mut [Option<std::net::TcpStream>],
) -> Result<(), RunError> {
    use std::io::Write;
    let Connecting {
        addresses,
        me,
        hello,
        deadline,
        timeout,
    } = *connecting;
    use std::net::TcpStream;
    for (index, address) in addresses.iter().enumerate().take(me) {
        let mut stream = loop {
            match TcpStream::connect(address) {
                Ok(stream) => break stream,
                Err(e) if std::time::Instant::now() > deadline => {
                    return Err(RunError::Cluster(format!(
                        "process {me} cannot connect to process {index} at {address} within {} s: {e}",
                        timeout.as_secs()
                    )));
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
            }
        };
        let answer = stream
            .set_nodelay(true)
            .and_then(|()| stream.write_all(&hello.bytes()))
            .map_err(|e| e.to_string())
            .and_then(|()| Hello::read(&mut stream, deadline));
        let problem = match answer {
            Err(e) => Some(e),
            Ok(answer) if answer.index != index as u64 => Some(format!(
                "it is process {} of the cluster, not process {index}",
                answer.index
            )),
            Ok(answer) => hello.mismatch(answer),
        };
        if let Some(problem) = problem {
            return Err(RunError::Cluster(format!(
                "process {me} reached {address} but not stgflow process {index} ({problem}); check the hostfile and that the port is not used by another program"
            )));
        }
        sockets[index] = Some(stream);
    }
    Ok(())
}

/// Accepts the processes after this one (`me`) on `listener`, answering each greeting;
/// a connection that does not greet in time is not one of them and is dropped.
fn accept(
    connecting: &Connecting<'_>,
    listener: std::net::TcpListener,
    sockets: &mut [Option<std::net::TcpStream>],
) -> Result<(), RunError> {
    use std::io::Write;
    let Connecting {
        addresses,
        me,
        hello,
        deadline,
        timeout,
    } = *connecting;
    while sockets
        .iter()
        .enumerate()
        .skip(me + 1)
        .any(|(_, s)| s.is_none())
    {
        match listener.accept() {
            Ok((mut stream, peer)) => {
                let greeting = stream
                    .set_nonblocking(false)
                    .and_then(|()| stream.set_nodelay(true))
                    .map_err(|e| e.to_string())
                    .and_then(|()| {
                        // Peers greet at once; a silent connection is not one of them.
                        let soon = std::time::Instant::now() + std::time::Duration::from_secs(5);
                        Hello::read(&mut stream, deadline.min(soon))
                    });
                let from = match greeting {
                    // A stray connection: not one of ours; keep waiting.
                    Err(_) => continue,
                    Ok(from) => from,
                };
                let index = usize::try_from(from.index).unwrap_or(usize::MAX);
                let problem = match sockets.get(index) {
                    Some(None) if index > me => hello.mismatch(from),
                    Some(Some(_)) => Some(format!("process {index} connected twice")),
                    _ => Some(format!("it says it is process {index}")),
                };
                // Answer even a peer that cannot join, so that it sees why.
                let answered = stream.write_all(&hello.bytes());
                if let Some(problem) = problem {
                    return Err(RunError::Cluster(format!(
                        "process {me}: a peer at {peer} cannot join ({problem})"
                    )));
                }
                answered.map_err(|e| {
                    RunError::Cluster(format!("process {me} lost process {index}: {e}"))
                })?;
                sockets[index] = Some(stream);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if std::time::Instant::now() > deadline {
                    let missing: Vec<String> = (me + 1..addresses.len())
                        .filter(|&i| sockets[i].is_none())
                        .map(|i| format!("{i} ({})", addresses[i]))
                        .collect();
                    return Err(RunError::Cluster(format!(
                        "process {me} waited {} s for process(es) {} to connect",
                        timeout.as_secs(),
                        missing.join(", ")
                    )));
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(RunError::Cluster(format!("process {me}: {e}"))),
        }
    }
    Ok(())
}
