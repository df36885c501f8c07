//! Connecting a cluster's processes: each dials the ones before it and accepts the ones
//! after it, and both sides exchange a greeting ([`Hello`]) before timely's networking
//! takes the sockets over. Timely's own setup prints to stdout and retries forever; this
//! one is quiet, gives up after a timeout, and says what is wrong: a stray program on a
//! port, a peer started with another `-n` or `-w`, or one that would build another
//! dataflow or feed other facts ([`Fingerprint`]), which would otherwise wait on the
//! others for ever. With a cluster key ([`ClusterKey`]) each side also proves that it
//! holds the key, without sending it, before anything else it says is believed.

use hmac::{Hmac, Mac};
use sha2::{Digest as _, Sha256};
use stgflow_io::drive::RunError;

/// A digest of one part of what a process computes.
pub type Digest = [u8; 16];

/// What decides a process's dataflow and its input, each part as a [`Digest`]: processes
/// whose fingerprints differ cannot run one computation together, so they are refused
/// at set-up, with the part that differs named.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fingerprint {
    /// The compiled program (after a front end's translation).
    pub program: Digest,
    /// The options that change the evaluation or the output.
    pub options: Digest,
    /// stgflow's version.
    pub version: Digest,
    /// The input files' names and sizes; all zero where the process reads a live stream
    /// (its input comes to process 0 alone, and no other process's files are read), which
    /// is compared with nothing.
    pub inputs: Digest,
}

impl Fingerprint {
    /// The digest of `bytes`: the first 16 bytes of their SHA-256.
    pub fn digest(bytes: &[u8]) -> Digest {
        let full = Sha256::digest(bytes);
        let mut digest = [0u8; 16];
        digest.copy_from_slice(&full[..16]);
        digest
    }

    /// The parts, in the greeting's order.
    fn parts(&self) -> [&Digest; 4] {
        [&self.version, &self.program, &self.options, &self.inputs]
    }

    /// What differs between this process's fingerprint and `other`'s, in words.
    fn differences(&self, other: &Fingerprint) -> Vec<&'static str> {
        let live = |f: &Fingerprint| f.inputs == [0u8; 16];
        let mut differs = Vec::new();
        if self.version != other.version {
            differs.push("it runs another version of stgflow");
        }
        if self.program != other.program {
            differs.push("it runs another program");
        }
        if self.options != other.options {
            differs.push(
                "it runs with other options (a mode, output, time or input setting that changes the evaluation or the output)",
            );
        }
        if self.inputs != other.inputs && !live(self) && !live(other) {
            differs.push("it reads other input files (their names or sizes differ)");
        }
        differs
    }
}

/// A shared secret that every process of a cluster holds (`--cluster-key-file`): a
/// process that cannot prove it holds the key is refused.
#[derive(Clone, PartialEq, Eq)]
pub struct ClusterKey(Vec<u8>);

impl ClusterKey {
    /// The key of `bytes`; an empty one is refused (it would admit anyone).
    pub fn new(bytes: Vec<u8>) -> Option<ClusterKey> {
        (!bytes.is_empty()).then_some(ClusterKey(bytes))
    }

    /// This side's proof that it holds the key, bound to both greetings (and so to both
    /// sides' fresh nonces) and to the side that gives it, so that no proof can be
    /// replayed or reflected.
    fn proof(&self, role: u8, own: &[u8], other: &[u8]) -> [u8; 32] {
        self.mac(role, own, other).finalize().into_bytes().into()
    }

    /// Whether `proof` is the other side's (given in `role`) over the same greetings.
    fn verifies(&self, role: u8, other: &[u8], own: &[u8], proof: &[u8]) -> bool {
        self.mac(role, other, own).verify_slice(proof).is_ok()
    }

    fn mac(&self, role: u8, prover: &[u8], verifier: &[u8]) -> Hmac<Sha256> {
        // Any key length is accepted by HMAC.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(&[role]);
        mac.update(prover);
        mac.update(verifier);
        mac
    }
}

impl std::fmt::Debug for ClusterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClusterKey(…)")
    }
}

/// The proofs' roles: the side that dialed, the side that accepted.
const DIALED: u8 = 1;
const ACCEPTED: u8 = 2;

/// A peer greets at once; a connection silent for longer is not one.
const GREETING_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// What a process says when it connects to another, and the answer it expects: a magic
/// word, its index, the number of processes and the worker threads per process, a fresh
/// nonce, whether it holds a cluster key, and its [`Fingerprint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hello {
    index: u64,
    processes: u64,
    workers: u64,
    nonce: [u8; 16],
    keyed: bool,
    fingerprint: Fingerprint,
}

/// The bytes of a greeting.
const HELLO: usize = 8 + 24 + 16 + 1 + 64;

impl Hello {
    const MAGIC: [u8; 8] = *b"stgflow2";
    /// The greeting of the versions before fingerprints.
    const OLD_MAGIC: [u8; 8] = *b"stgflow1";

    fn bytes(&self) -> [u8; HELLO] {
        let mut out = [0u8; HELLO];
        out[..8].copy_from_slice(&Hello::MAGIC);
        out[8..16].copy_from_slice(&self.index.to_le_bytes());
        out[16..24].copy_from_slice(&self.processes.to_le_bytes());
        out[24..32].copy_from_slice(&self.workers.to_le_bytes());
        out[32..48].copy_from_slice(&self.nonce);
        out[48] = u8::from(self.keyed);
        for (i, digest) in self.fingerprint.parts().iter().enumerate() {
            out[49 + 16 * i..65 + 16 * i].copy_from_slice(*digest);
        }
        out
    }

    /// Reads a hello from `stream` before `deadline`.
    fn read(
        stream: &mut std::net::TcpStream,
        deadline: std::time::Instant,
    ) -> Result<Hello, String> {
        let mut bytes = [0u8; HELLO];
        read_before(stream, &mut bytes[..8], deadline)?;
        if bytes[..8] == Hello::OLD_MAGIC {
            return Err("it runs another version of stgflow (one without fingerprints)".to_owned());
        }
        if bytes[..8] != Hello::MAGIC {
            return Err("it is not an stgflow process of this version".to_owned());
        }
        read_before(stream, &mut bytes[8..], deadline)?;
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[i..i + 8]);
            u64::from_le_bytes(w)
        };
        let digest = |i: usize| {
            let mut d = [0u8; 16];
            d.copy_from_slice(&bytes[49 + 16 * i..65 + 16 * i]);
            d
        };
        let mut nonce = [0u8; 16];
        nonce.copy_from_slice(&bytes[32..48]);
        Ok(Hello {
            index: word(8),
            processes: word(16),
            workers: word(24),
            nonce,
            keyed: bytes[48] != 0,
            fingerprint: Fingerprint {
                version: digest(0),
                program: digest(1),
                options: digest(2),
                inputs: digest(3),
            },
        })
    }

    /// Why `other` cannot join this cluster, if it cannot.
    fn mismatch(&self, other: &Hello) -> Option<String> {
        if other.processes != self.processes {
            return Some(format!(
                "it runs with -n {} and this process with -n {}",
                other.processes, self.processes
            ));
        }
        if other.workers != self.workers {
            return Some(format!(
                "it runs with -w {} and this process with -w {}; every process needs the same -w",
                other.workers, self.workers
            ));
        }
        let differs = self.fingerprint.differences(&other.fingerprint);
        (!differs.is_empty()).then(|| {
            format!(
                "{}; every process must be started with the same program, options and files",
                differs.join("; ")
            )
        })
    }

    /// Why `other` and this process cannot prove a key to each other, if they cannot.
    fn keys_differ(&self, other: &Hello) -> Option<String> {
        match (self.keyed, other.keyed) {
            (true, false) => Some(
                "it has no cluster key and this process has one (--cluster-key-file)".to_owned(),
            ),
            (false, true) => Some(
                "it has a cluster key and this process has none (--cluster-key-file)".to_owned(),
            ),
            _ => None,
        }
    }
}

/// Reads exactly `bytes` from `stream` before `deadline`, saying why it could not.
fn read_before(
    stream: &mut std::net::TcpStream,
    bytes: &mut [u8],
    deadline: std::time::Instant,
) -> Result<(), String> {
    use std::io::Read;
    let left = deadline.saturating_duration_since(std::time::Instant::now());
    stream
        .set_read_timeout(Some(left.max(std::time::Duration::from_millis(10))))
        .map_err(|e| e.to_string())?;
    stream.read_exact(bytes).map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            "no answer in time".to_owned()
        }
        std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset => {
            "the connection was closed".to_owned()
        }
        _ => e.to_string(),
    })?;
    stream.set_read_timeout(None).map_err(|e| e.to_string())
}

/// Who this process is in the cluster and what it proves to the others.
pub(super) struct Identity<'a> {
    pub(super) me: usize,
    pub(super) workers: usize,
    pub(super) fingerprint: Fingerprint,
    pub(super) key: Option<&'a ClusterKey>,
}

/// Connects this process to every other: it dials the processes before it and accepts the
/// ones after it, exchanging a [`Hello`] with each (and, with a key, proofs of it).
/// Timely's own setup prints progress to stdout and retries forever; this one is quiet
/// and gives up after `timeout` with a message naming the process it waited for.
pub(super) fn connect(
    addresses: &[String],
    identity: &Identity<'_>,
    timeout: std::time::Duration,
) -> Result<Vec<Option<std::net::TcpStream>>, RunError> {
    use std::net::{TcpListener, TcpStream};
    let me = identity.me;
    let deadline = std::time::Instant::now() + timeout;
    let mut nonce = [0u8; 16];
    getrandom::fill(&mut nonce)
        .map_err(|e| RunError::Cluster(format!("process {me}: no random nonce: {e}")))?;
    let hello = Hello {
        index: me as u64,
        processes: addresses.len() as u64,
        workers: identity.workers as u64,
        nonce,
        keyed: identity.key.is_some(),
        fingerprint: identity.fingerprint,
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
        key: identity.key,
        deadline,
        timeout,
    };
    dial(&connecting, &mut sockets)?;
    if let Some(listener) = listener {
        accept(&connecting, listener, &mut sockets)?;
    }
    Ok(sockets)
}

/// What dialing and accepting both go by: the cluster's addresses, this process's index,
/// greeting and key, and when to give up.
struct Connecting<'a> {
    addresses: &'a [String],
    me: usize,
    hello: Hello,
    key: Option<&'a ClusterKey>,
    deadline: std::time::Instant,
    timeout: std::time::Duration,
}

/// Dials the processes before this one (`me`), greeting each; their sockets go into
/// `sockets`.
fn dial(
    connecting: &Connecting<'_>,
    sockets: &mut [Option<std::net::TcpStream>],
) -> Result<(), RunError> {
    use std::net::TcpStream;
    let Connecting {
        addresses,
        me,
        deadline,
        timeout,
        ..
    } = *connecting;
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
        match greet_dialed(connecting, &mut stream, index) {
            Ok(()) => {}
            Err(Refusal::Stranger(problem)) => {
                return Err(RunError::Cluster(format!(
                    "process {me} reached {address} but not stgflow process {index} ({problem}); check the hostfile and that the port is not used by another program"
                )));
            }
            Err(Refusal::Differs(problem)) => {
                return Err(RunError::Cluster(format!(
                    "process {me} cannot join process {index} at {address}: {problem}"
                )));
            }
        }
        sockets[index] = Some(stream);
    }
    Ok(())
}

/// Why a dialed process was not joined.
enum Refusal {
    /// It is not process `index` of an stgflow cluster.
    Stranger(String),
    /// It is, but it or this process cannot run with the other.
    Differs(String),
}

/// The dialing side's greeting of process `index`: hellos, then with a key this side's
/// proof and the other's.
fn greet_dialed(
    connecting: &Connecting<'_>,
    stream: &mut std::net::TcpStream,
    index: usize,
) -> Result<(), Refusal> {
    use std::io::Write;
    let hello = connecting.hello.bytes();
    let answer = stream
        .set_nodelay(true)
        .and_then(|()| stream.write_all(&hello))
        .map_err(|e| e.to_string())
        .and_then(|()| Hello::read(stream, connecting.deadline))
        .map_err(Refusal::Stranger)?;
    if answer.index != index as u64 {
        return Err(Refusal::Stranger(format!(
            "it is process {} of the cluster, not process {index}",
            answer.index
        )));
    }
    if let Some(problem) = connecting.hello.keys_differ(&answer) {
        return Err(Refusal::Differs(problem));
    }
    if let Some(key) = connecting.key {
        let theirs = answer.bytes();
        let mut proof = [0u8; 32];
        stream
            .write_all(&key.proof(DIALED, &hello, &theirs))
            .map_err(|e| e.to_string())
            .and_then(|()| read_before(stream, &mut proof, connecting.deadline))
            .map_err(|e| {
                Refusal::Differs(format!(
                    "it refused this process's cluster key: the keys differ ({e})"
                ))
            })?;
        if !key.verifies(ACCEPTED, &theirs, &hello, &proof) {
            return Err(Refusal::Differs(
                "it does not hold this process's cluster key".to_owned(),
            ));
        }
    }
    match connecting.hello.mismatch(&answer) {
        Some(problem) => Err(Refusal::Differs(problem)),
        None => Ok(()),
    }
}

/// Accepts the processes after this one (`me`) on `listener`, answering each greeting;
/// a connection that does not greet in time, or cannot prove the cluster key, is not one
/// of them and is dropped (the reason is given if the others do not come in time).
fn accept(
    connecting: &Connecting<'_>,
    listener: std::net::TcpListener,
    sockets: &mut [Option<std::net::TcpStream>],
) -> Result<(), RunError> {
    let Connecting {
        addresses,
        me,
        deadline,
        timeout,
        ..
    } = *connecting;
    let mut refused: Option<String> = None;
    while sockets
        .iter()
        .enumerate()
        .skip(me + 1)
        .any(|(_, s)| s.is_none())
    {
        match listener.accept() {
            Ok((mut stream, peer)) => match greet_accepted(connecting, &mut stream, sockets) {
                Accepted::Joined(index) => sockets[index] = Some(stream),
                Accepted::Stray => {}
                Accepted::Refused(why) => refused = Some(format!("a peer at {peer} {why}")),
                Accepted::Mismatch(problem) => {
                    return Err(RunError::Cluster(format!(
                        "process {me}: a peer at {peer} cannot join ({problem})"
                    )));
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if std::time::Instant::now() > deadline {
                    let missing: Vec<String> = (me + 1..addresses.len())
                        .filter(|&i| sockets[i].is_none())
                        .map(|i| format!("{i} ({})", addresses[i]))
                        .collect();
                    let refused = refused
                        .map(|r| format!("; refused {r}"))
                        .unwrap_or_default();
                    return Err(RunError::Cluster(format!(
                        "process {me} waited {} s for process(es) {} to connect{refused}",
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

/// What became of a connection accepted.
enum Accepted {
    /// Process `index` joined.
    Joined(usize),
    /// Not a greeting: not one of ours.
    Stray,
    /// It could not prove the cluster key: dropped, the cluster waits on.
    Refused(String),
    /// One of ours that cannot join: the run ends.
    Mismatch(String),
}

/// The accepting side's greeting: the peer's hello, this one's answer (even to a peer
/// that cannot join, so that it sees why), then with a key the peer's proof and, if it
/// holds, this side's.
fn greet_accepted(
    connecting: &Connecting<'_>,
    stream: &mut std::net::TcpStream,
    sockets: &[Option<std::net::TcpStream>],
) -> Accepted {
    use std::io::Write;
    let me = connecting.me;
    let soon = (std::time::Instant::now() + GREETING_TIME).min(connecting.deadline);
    let greeting = stream
        .set_nonblocking(false)
        .and_then(|()| stream.set_nodelay(true))
        .map_err(|e| e.to_string())
        .and_then(|()| Hello::read(stream, soon));
    let Ok(from) = greeting else {
        return Accepted::Stray;
    };
    let hello = connecting.hello.bytes();
    let answered = stream.write_all(&hello);
    if let Some(problem) = connecting.hello.keys_differ(&from) {
        // Without the key a peer's word is not taken: it may be a stranger.
        return match connecting.key {
            Some(_) => Accepted::Refused(problem),
            None => Accepted::Mismatch(problem),
        };
    }
    if let Some(key) = connecting.key {
        let theirs = from.bytes();
        let mut proof = [0u8; 32];
        let proved = read_before(stream, &mut proof, soon).is_ok()
            && key.verifies(DIALED, &theirs, &hello, &proof);
        if !proved {
            return Accepted::Refused("could not prove the cluster key".to_owned());
        }
        if stream
            .write_all(&key.proof(ACCEPTED, &hello, &theirs))
            .is_err()
        {
            return Accepted::Refused("closed the connection".to_owned());
        }
    }
    let index = usize::try_from(from.index).unwrap_or(usize::MAX);
    let problem = match sockets.get(index) {
        Some(None) if index > me => connecting.hello.mismatch(&from),
        Some(Some(_)) => Some(format!("process {index} connected twice")),
        _ => Some(format!("it says it is process {index}")),
    };
    if let Some(problem) = problem {
        return Accepted::Mismatch(problem);
    }
    match answered {
        Ok(()) => Accepted::Joined(index),
        Err(e) => Accepted::Mismatch(format!("process {index} was lost: {e}")),
    }
}
