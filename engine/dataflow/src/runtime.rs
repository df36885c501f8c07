//! Runs a program on timely workers: `-w` threads, `-n/-p/-h` processes.
//!
//! * The calling thread reads and merges the input ([`stgflow_io::drive::feed`]), turns each
//!   time point's facts into *changes* against the previous time point (a fact that keeps
//!   holding costs nothing), and sends them in batches to worker 0 over a bounded channel,
//!   so only a bounded number of time points is in flight. A batch holds one vector per
//!   predicate ([`Batch`]); worker 0 hands each to that predicate's input handle as one
//!   container, and the operators' exchanges shard them from there.
//! * Worker 0 advances the inputs to the end of each batch and steps until the output
//!   probe passes it; every output update before that time is then final. The output is
//!   exchanged to worker 0, which puts it in output order ([`in_output_order`]) and sends
//!   it back; the calling thread writes it to the [`Sink`] time point by time point.
//! * A live stream (`-`) sends each time point as soon as it is complete and waits for its
//!   output, so each time point is printed before the next line is read.
//! * Every other worker has no input of its own: it closes its input handles at once and
//!   steps (parking when idle) until the dataflow is done. In a cluster only process 0
//!   reads the input and writes the output.

use std::cell::RefCell;
use std::hash::BuildHasher;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use crossbeam_channel::{Receiver, RecvTimeoutError, SendTimeoutError, Sender, bounded, unbounded};
use differential_dataflow::AsCollection;
use hashbrown::{DefaultHashBuilder, HashTable};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::ProbeHandle;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::input::{Handle as InputHandle, Input};
use timely::dataflow::operators::{Exchange, Probe};

use crate::plan::{Plan, plan};
use crate::render::{Output, render};
use stgflow_io::drive::{FactSource, RunError, RunSummary, TimePoints, Timeline, feed};
use stgflow_io::sink::Sink;
use stgflow_lang::ir::{PredId, Program};
use stgflow_lang::stratify::Analysis;
use stgflow_lang::value::Row;

type Update = ((u32, Row), u64, isize);

/// An input fact: its predicate and arguments.
type Fact = (PredId, Row);

/// How often the calling thread, waiting for worker 0, looks for a stop request.
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Where the workers run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// Worker threads per process (`-w`).
    pub workers: usize,
    /// Processes (`-n`).
    pub processes: usize,
    /// This process's index (`-p`).
    pub process: usize,
    /// One `host:port` per line, a line per process (`-h`); default: 127.0.0.1 from port
    /// 2101 up.
    pub hostfile: Option<PathBuf>,
    /// How long a process waits for the others to connect.
    pub connect_timeout: std::time::Duration,
}

impl Default for Cluster {
    fn default() -> Cluster {
        Cluster {
            workers: 1,
            processes: 1,
            process: 0,
            hostfile: None,
            connect_timeout: std::time::Duration::from_secs(30),
        }
    }
}

impl Cluster {
    /// The addresses of the processes: the hostfile's lines, or 127.0.0.1 from port 2101.
    fn addresses(&self) -> Result<Vec<String>, RunError> {
        let Some(path) = &self.hostfile else {
            return Ok((0..self.processes)
                .map(|i| format!("127.0.0.1:{}", 2101 + i))
                .collect());
        };
        let text = std::fs::read_to_string(path).map_err(|e| {
            RunError::Cluster(format!("cannot read hostfile {}: {e}", path.display()))
        })?;
        let mut addresses = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            use std::net::ToSocketAddrs;
            if let Err(e) = line.to_socket_addrs() {
                return Err(RunError::Cluster(format!(
                    "hostfile {}:{}: `{line}` is not a `host:port` address ({e})",
                    path.display(),
                    number + 1
                )));
            }
            addresses.push(line.to_owned());
        }
        if addresses.len() < self.processes {
            return Err(RunError::Cluster(format!(
                "hostfile {} lists {} address(es) for {} processes",
                path.display(),
                addresses.len(),
                self.processes
            )));
        }
        Ok(addresses)
    }

    /// Starts the workers of this process running `func`.
    fn execute<F>(&self, func: F) -> Result<timely::communication::WorkerGuards<()>, RunError>
    where
        F: Fn(&mut timely::worker::Worker) + Send + Sync + 'static,
    {
        let threads = self.workers.max(1);
        if self.processes <= 1 {
            let communication = if threads > 1 {
                timely::CommunicationConfig::Process(threads)
            } else {
                timely::CommunicationConfig::Thread
            };
            let config = timely::Config {
                communication,
                worker: timely::WorkerConfig::default(),
            };
            return timely::execute(config, func).map_err(RunError::Cluster);
        }
        if self.process >= self.processes {
            return Err(RunError::Cluster(format!(
                "process index {} is not below the number of processes {}",
                self.process, self.processes
            )));
        }
        let addresses = self.addresses()?;
        stgflow_io::interrupt::watch_cluster_failures();
        let sockets = connect(
            &addresses[..self.processes],
            self.process,
            threads,
            self.connect_timeout,
        )?;
        use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
        use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};
        let hooks = timely::communication::Hooks::default();
        let local =
            ProcessBuilder::new_typed_vector(threads, hooks.refill.clone(), hooks.spill.clone());
        let (builders, guard) =
            initialize_networking_from_sockets(local, sockets, self.process, threads, hooks)
                .map_err(|e| {
                    RunError::Cluster(format!("cannot start the cluster's networking: {e}"))
                })?;
        let builders = builders.into_iter().map(AllocatorBuilder::Tcp).collect();
        timely::execute::execute_from(
            builders,
            Box::new(guard),
            timely::WorkerConfig::default(),
            func,
        )
        .map_err(RunError::Cluster)
    }
}

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
fn connect(
    addresses: &[String],
    me: usize,
    workers: usize,
    timeout: std::time::Duration,
) -> Result<Vec<Option<std::net::TcpStream>>, RunError> {
    use std::io::Write;
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
    if let Some(listener) = listener {
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
                            let soon =
                                std::time::Instant::now() + std::time::Duration::from_secs(5);
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
    }
    Ok(sockets)
}

/// How to run the dataflow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub cluster: Cluster,
    /// Lower ♢/□ window definitions to delay operators.
    pub lower_windows: bool,
    /// Send each time point on its own and print its output before reading on.
    pub live: bool,
    /// Most time points per batch in replay.
    pub batch_points: u64,
    /// Most input changes per batch in replay.
    pub batch_updates: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            cluster: Cluster::default(),
            lower_windows: true,
            live: false,
            batch_points: 4096,
            batch_updates: 1 << 16,
        }
    }
}

enum ToWorker {
    Feed {
        /// The batch's changes by input channel: one vector per predicate, then the unit
        /// row's (see [`Batch`]).
        parts: Vec<Vec<Change>>,
        advance_to: u64,
        /// The timeline's first time point (see [`in_output_order`]).
        first: u64,
        /// An emptied output buffer for worker 0 to fill next (its allocation reused).
        recycled: Vec<Update>,
    },
    Finish {
        advance_to: u64,
        first: u64,
    },
}

enum FromWorker {
    Output {
        upto: u64,
        /// Everything before `upto` not sent before, in output order ([`in_output_order`]).
        updates: Vec<Update>,
    },
    Done,
}

/// Runs `program` over `sources` on timely workers, writing what holds to `sink`.
pub fn run<W: Write>(
    program: &Program,
    analysis: &Analysis,
    sources: &mut [Box<dyn FactSource + '_>],
    timeline: Timeline,
    options: &Options,
    sink: &mut Sink<W>,
) -> Result<RunSummary, RunError> {
    let plan = Arc::new(plan(program, analysis, options.lower_windows));
    let program_arc = Arc::new(program.clone());
    let outputs = Arc::new(program.output_predicates());
    let (to_worker, from_main) = bounded::<ToWorker>(IN_FLIGHT);
    let (to_main, from_worker) = unbounded::<FromWorker>();
    let guards = options.cluster.execute({
        let (program, plan, outputs) = (program_arc.clone(), plan.clone(), outputs.clone());
        move |worker| work(worker, &program, &plan, &outputs, &from_main, &to_main)
    })?;
    if options.cluster.process != 0 {
        drop(to_worker);
        return join(guards).map(|()| RunSummary::default());
    }
    let mut feeder = Feeder {
        to_worker: Some(to_worker),
        from_worker,
        sink,
        live: options.live,
        batch_points: options.batch_points.max(1),
        batch_updates: options.batch_updates.max(1),
        previous: HeldFacts::default(),
        spare: HeldFacts::default(),
        hasher: DefaultHashBuilder::default(),
        batch: Batch::new(program.predicates.len() + 1),
        batch_start: None,
        advance_to: 0,
        next_emit: None,
        first: None,
        unit_fed: false,
        pending: Vec::new(),
        spare_outputs: Vec::new(),
        summary: RunSummary::default(),
        flushed_on_stop: false,
    };
    let result = feed(sources, timeline, &mut feeder).and_then(|fed| feeder.finish().map(|()| fed));
    let finished = match result {
        Ok(fed) => {
            let mut summary = std::mem::take(&mut feeder.summary);
            summary.add_input(fed, sources);
            feeder.sink.finish()?;
            Ok(summary)
        }
        Err(error) => {
            // Keep what was produced, then let the workers finish.
            let _ = feeder.finish();
            let _ = feeder.sink.flush();
            Err(error)
        }
    };
    drop(feeder);
    join(guards)?;
    finished
}

/// Waits for the workers. A lost cluster peer makes timely's network threads, then the
/// workers and the network guard panic; that becomes the [`stgflow_io::interrupt`] reason's
/// message instead of a panic of the calling thread.
fn join(guards: timely::communication::WorkerGuards<()>) -> Result<(), RunError> {
    let joined = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| guards.join()));
    let failure = match joined {
        Ok(results) => match results.into_iter().find_map(Result::err) {
            None => return Ok(()),
            Some(error) => format!("a worker failed: {error}"),
        },
        Err(_) => "the cluster's network failed".to_owned(),
    };
    Err(match stgflow_io::interrupt::requested() {
        Some(stgflow_io::interrupt::Stop::Cluster(message)) => RunError::Cluster(message),
        _ => RunError::Cluster(failure),
    })
}

/// One worker: builds the dataflow; worker 0 also feeds it and reports its output.
fn work(
    worker: &mut timely::worker::Worker,
    program: &Program,
    plan: &Plan,
    outputs: &[PredId],
    from_main: &Receiver<ToWorker>,
    to_main: &Sender<FromWorker>,
) {
    let probe = ProbeHandle::new();
    let captured: Rc<RefCell<Vec<Update>>> = Rc::new(RefCell::new(Vec::new()));
    // One input handle per predicate, then the unit row's: a batch goes in as one
    // container per predicate, moved, not copied record by record into a session and
    // again by an operator splitting a tagged stream.
    let channels = program.predicates.len() + 1;
    let mut inputs: Vec<InputHandle<u64, (Row, u64, isize)>> =
        (0..channels).map(|_| InputHandle::new()).collect();
    worker.dataflow::<u64, _, _>(|scope| {
        let facts = inputs
            .iter_mut()
            .map(|handle| scope.input_from(handle).as_collection())
            .collect();
        let mut printed = vec![false; program.predicates.len()];
        for &p in outputs {
            printed[p] = true;
        }
        let printed = Rc::new(printed);
        // Moves the output into `captured`, tagged with its predicate; the probe behind
        // each capture passes a time once everything before it has been moved.
        for out in render(program, plan, facts, outputs) {
            let sink = captured.clone();
            match out {
                Output::Predicate(tag, out) => capture(out.inner, move |data| {
                    sink.borrow_mut()
                        .extend(data.drain(..).map(|(row, t, r)| ((tag, row), t, r)));
                }),
                Output::Tagged(out) => {
                    let printed = printed.clone();
                    capture(out.inner, move |data| {
                        let is_printed = |tag: u32| printed.get(tag as usize) == Some(&true);
                        let mut sink = sink.borrow_mut();
                        if data.iter().all(|((tag, _), _, _)| is_printed(*tag)) {
                            sink.append(data);
                        } else {
                            sink.extend(data.drain(..).filter(|((tag, _), _, _)| is_printed(*tag)));
                        }
                    })
                }
            }
            .probe_with(&probe);
        }
    });
    if worker.index() != 0 {
        drop(inputs);
        return;
    }
    let mut now = 0u64;
    let rank = stgflow_io::sink::name_ranks(program);
    let mut order: Vec<(u64, u32)> = Vec::new();
    while let Ok(message) = from_main.recv() {
        let (mut parts, advance_to, first, recycled, last) = match message {
            ToWorker::Feed {
                parts,
                advance_to,
                first,
                recycled,
            } => (parts, advance_to, first, recycled, false),
            ToWorker::Finish { advance_to, first } => {
                (Vec::new(), advance_to, first, Vec::new(), true)
            }
        };
        // Each predicate's changes go in as one container, moved, not copied.
        parts.resize_with(channels, Vec::new);
        for (handle, part) in inputs.iter_mut().zip(&mut parts) {
            if part.iter().any(|(_, time, _)| *time < now) {
                part.retain(|(_, time, _)| *time >= now);
            }
            handle.send_batch(part);
            if advance_to > *handle.time() {
                handle.advance_to(advance_to);
            }
        }
        now = now.max(advance_to);
        while probe.less_than(&now) {
            worker.step_or_park(None);
        }
        // The output below `advance_to`, in output order: sorted here, where the calling
        // thread (reading, diffing and writing) would otherwise be the bottleneck.
        let mut ready = recycled;
        {
            let mut all = captured.borrow_mut();
            ready.reserve(all.len());
            if all.iter().all(|(_, t, _)| *t < advance_to) {
                in_output_order(&mut all, &rank, first, &mut order, &mut ready);
            } else {
                let (mut due, later): (Vec<Update>, Vec<Update>) =
                    all.drain(..).partition(|(_, t, _)| *t < advance_to);
                *all = later;
                in_output_order(&mut due, &rank, first, &mut order, &mut ready);
            }
        }
        if to_main
            .send(FromWorker::Output {
                upto: advance_to,
                updates: ready,
            })
            .is_err()
            || last
        {
            break;
        }
    }
    drop(inputs);
    let _ = to_main.send(FromWorker::Done);
}

/// Hands each container of `stream`, on worker 0, to `take`; returns the (empty) stream
/// behind it, for a probe.
fn capture<'s, D: timely::ExchangeData>(
    stream: timely::dataflow::Stream<'s, u64, Vec<D>>,
    mut take: impl FnMut(&mut Vec<D>) + 'static,
) -> timely::dataflow::Stream<'s, u64, Vec<()>> {
    stream
        .exchange(|_| 0)
        .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(Pipeline, "Capture", move |_, _| {
            move |input, _output| input.for_each(|_, data| take(data))
        })
}

/// Moves a batch of output, `updates`, onto the end of `into` in the order the [`Sink`]
/// writes it — by time, predicate name ([`stgflow_io::sink::name_ranks`]), arguments — and
/// consolidated: one update per fact and time point, none that cancel out. Nothing should
/// be stamped before the timeline's first point `first` (the unit row starts there);
/// should anything be, it takes effect there. Done on worker 0, since the calling thread
/// (reading, diffing, writing) is the busier one: ♢10 over 10⁶ facts, calling thread 65 %
/// of the samples with the sort there (the worker used to be the busier one, before its
/// inputs were moved in whole containers).
///
/// Sorts (key, index) pairs, not the 64-byte updates: the key packs the time (relative to
/// the batch's first), the predicate's rank and [`Value::order_prefix`] of the first
/// argument, so most comparisons are one integer comparison; `order` is scratch space.
fn in_output_order(
    updates: &mut Vec<Update>,
    rank: &[usize],
    first: u64,
    order: &mut Vec<(u64, u32)>,
    into: &mut Vec<Update>,
) {
    for (_, time, _) in updates.iter_mut() {
        *time = (*time).max(first);
    }
    let rank_of = |p: u32| rank.get(p as usize).copied().unwrap_or(usize::MAX);
    let start = into.len();
    let indexable = rank.len() < 1 << 16 && u32::try_from(updates.len()).is_ok();
    // A key per update: the predicate's rank (an unknown one last, as `rank_of` has it)
    // and the first argument's order prefix, under `time_bits`; equal keys fall back to
    // the arguments.
    let key = |((p, row), _, _): &Update, time_bits: u64| {
        let prefix = row.first().map_or(0, |v| v.order_prefix());
        let rank = rank_of(*p).min(0xFFFF) as u64;
        time_bits | (rank << 32) | u64::from(prefix)
    };
    let by_key = |updates: &[Update], order: &mut [(u64, u32)]| {
        order.sort_unstable_by(|&(a, i), &(b, j)| {
            a.cmp(&b)
                .then_with(|| updates[i as usize].0.1.cmp(&updates[j as usize].0.1))
        });
    };
    if indexable && updates.windows(2).all(|w| w[0].1 <= w[1].1) {
        // Already in time order (one operator's output, time point by time point): each
        // time point is sorted on its own, in cache, and moved out before the next.
        let mut from = 0;
        while let Some(&(_, time, _)) = updates.get(from) {
            let to = from
                + updates[from..]
                    .iter()
                    .position(|u| u.1 != time)
                    .unwrap_or(updates.len() - from);
            order.clear();
            order.extend((from..to).map(|i| (key(&updates[i], 0), i as u32)));
            by_key(updates, order);
            move_in_order(order, updates, into, start);
            from = to;
        }
    } else {
        let base = updates.iter().map(|u| u.1).min().unwrap_or(0);
        let span = updates.iter().map(|u| u.1 - base).max().unwrap_or(0);
        order.clear();
        if indexable && span < 1 << 16 {
            order.extend(
                updates
                    .iter()
                    .enumerate()
                    .map(|(i, u)| (key(u, (u.1 - base) << 48), i as u32)),
            );
            by_key(updates, order);
        } else {
            updates.sort_unstable_by(|((p, row), t, _), ((q, other), u, _)| {
                t.cmp(u)
                    .then_with(|| rank_of(*p).cmp(&rank_of(*q)))
                    .then_with(|| row.cmp(other))
            });
            order.extend((0..updates.len()).map(|i| (0, i as u32)));
        }
        move_in_order(order, updates, into, start);
    }
    if into.len() > start && into.last().is_some_and(|u| u.2 == 0) {
        into.pop();
    }
    updates.clear();
}

/// Moves `updates` in `order` onto `into`, adding up equal ones and dropping those that
/// cancel out (`into[start..]` is this batch's part).
fn move_in_order(
    order: &[(u64, u32)],
    updates: &mut [Update],
    into: &mut Vec<Update>,
    start: usize,
) {
    for &(_, i) in order {
        let ((pred, row), time, diff) = &mut updates[i as usize];
        if let Some(last) = into[start..].last_mut() {
            if last.1 == *time && last.0.0 == *pred && last.0.1 == *row {
                last.2 += *diff;
                continue;
            }
            if last.2 == 0 {
                into.pop();
            }
        }
        into.push(((*pred, std::mem::take(row)), *time, *diff));
    }
}

/// Most batches queued for worker 0.
const IN_FLIGHT: usize = 4;

/// Most emptied output buffers kept to hand back to worker 0: as many as can be on their
/// way (the queued batches, the one worker 0 works on, the one being filled), so that none
/// is dropped and allocated afresh (with 4, ♢10 spent ~5 % of the calling thread's samples
/// zeroing fresh pages).
const SPARE_BUFFERS: usize = IN_FLIGHT + 2;

/// An input change: a fact's arguments, the time, +1 or −1.
type Change = (Row, u64, isize);

/// A batch of input changes, one vector per input channel: a predicate's changes under its
/// id, the unit row's ([`crate::render::UNIT_TAG`]) last. Worker 0 hands each vector to its
/// predicate's input handle as it is.
struct Batch {
    parts: Vec<Vec<Change>>,
    len: usize,
}

impl Batch {
    fn new(channels: usize) -> Batch {
        Batch {
            parts: vec![Vec::new(); channels],
            len: 0,
        }
    }

    fn push(&mut self, tag: u32, row: Row, time: u64, diff: isize) {
        let last = self.parts.len() - 1;
        self.parts[(tag as usize).min(last)].push((row, time, diff));
        self.len += 1;
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The changes so far; each channel starts again at its size in this batch, not
    /// empty: growing by doubling costs a copy and fresh pages each time.
    fn take(&mut self) -> Vec<Vec<Change>> {
        self.len = 0;
        self.parts
            .iter_mut()
            .map(|part| {
                let size = part.len();
                std::mem::replace(part, Vec::with_capacity(size))
            })
            .collect()
    }
}

/// The calling thread's side: input changes out, output back in.
struct Feeder<'a, W: Write> {
    to_worker: Option<Sender<ToWorker>>,
    from_worker: Receiver<FromWorker>,
    sink: &'a mut Sink<W>,
    live: bool,
    batch_points: u64,
    batch_updates: usize,
    /// The input facts of the last time point fed.
    previous: HeldFacts,
    /// An empty set whose allocation the next time point reuses.
    spare: HeldFacts,
    /// Hashes the facts of `previous` and `spare`, each once.
    hasher: DefaultHashBuilder,
    batch: Batch,
    batch_start: Option<u64>,
    /// Every time point below this has been fed.
    advance_to: u64,
    /// The next time point to write; `None` before the first.
    next_emit: Option<u64>,
    /// The first time point of the timeline.
    first: Option<u64>,
    /// Whether the unit row ([`crate::render::UNIT_TAG`]) has been fed, at the first
    /// time point.
    unit_fed: bool,
    /// Output received but not written yet, in output order.
    pending: Vec<Update>,
    /// Emptied output buffers passed back to worker 0, so that their memory stays
    /// allocated (fresh pages cost a page fault each).
    spare_outputs: Vec<Vec<Update>>,
    summary: RunSummary,
    /// Whether a stop request has flushed the sink (see [`Feeder::flush_on_stop`]).
    flushed_on_stop: bool,
}

/// The input facts of one time point, in arrival order, with an index by hash: what the
/// next time point's facts are diffed against. The order matters downstream: the −1s of
/// the facts that left go out in it, so that a window's count table, which stores records
/// in arrival order, meets them in the order it stored them (in hash order, each was a
/// cache miss once the table outgrew the caches).
#[derive(Default)]
struct HeldFacts {
    /// Each fact with its hash; `None` once the next time point has taken it.
    facts: Vec<(u64, Option<Fact>)>,
    /// Positions in `facts` of the facts not taken, by hash.
    index: HashTable<usize>,
}

impl HeldFacts {
    fn reserve(&mut self, additional: usize) {
        self.facts.reserve(additional);
        let facts = &self.facts;
        self.index.reserve(additional, |&i| facts[i].0);
    }

    /// Whether position `i` of `facts` holds `fact` (with `hash`).
    fn holds(facts: &[(u64, Option<Fact>)], i: usize, hash: u64, fact: &Fact) -> bool {
        facts[i].0 == hash && facts[i].1.as_ref() == Some(fact)
    }

    fn contains(&self, hash: u64, fact: &Fact) -> bool {
        let facts = &self.facts;
        self.index
            .find(hash, |&i| HeldFacts::holds(facts, i, hash, fact))
            .is_some()
    }

    /// Removes `fact` (with `hash`) and returns it, when held.
    fn take(&mut self, hash: u64, fact: &Fact) -> Option<Fact> {
        let facts = &mut self.facts;
        let entry = self
            .index
            .find_entry(hash, |&i| HeldFacts::holds(facts, i, hash, fact))
            .ok()?;
        let (i, _) = entry.remove();
        facts[i].1.take()
    }

    /// Adds `fact`, which is not held yet.
    fn push_unique(&mut self, hash: u64, fact: Fact) {
        let facts = &mut self.facts;
        facts.push((hash, Some(fact)));
        let at = facts.len() - 1;
        self.index.insert_unique(hash, at, |&i| facts[i].0);
    }

    /// Empties the set; returns the facts not taken, in arrival order.
    fn drain_left(&mut self) -> impl Iterator<Item = Fact> + '_ {
        self.index.clear();
        self.facts.drain(..).filter_map(|(_, fact)| fact)
    }
}

impl<W: Write> Feeder<'_, W> {
    fn retract_previous(&mut self, at: u64) {
        for (pred, tuple) in self.previous.drain_left() {
            self.batch.push(pred as u32, tuple, at, -1);
        }
    }

    /// Feeds the unit row at the first time point of the timeline, `t`.
    fn feed_unit(&mut self, t: u64) {
        if !self.unit_fed {
            self.unit_fed = true;
            self.batch.push(crate::render::UNIT_TAG, Row::new(), t, 1);
        }
    }

    fn fed_through(&mut self, t: u64) -> Result<(), RunError> {
        let start = *self.next_emit.get_or_insert(self.batch_start.unwrap_or(t));
        self.first.get_or_insert(start);
        self.advance_to = t + 1;
        let points = self.advance_to - self.batch_start.unwrap_or(t);
        if self.live || points >= self.batch_points || self.batch.len() >= self.batch_updates {
            self.send_batch()?;
        }
        Ok(())
    }

    fn send_batch(&mut self) -> Result<(), RunError> {
        let parts = self.batch.take();
        self.batch_start = None;
        let Some(channel) = self.to_worker.clone() else {
            return Ok(());
        };
        let message = ToWorker::Feed {
            parts,
            advance_to: self.advance_to,
            first: self.first.unwrap_or(0),
            recycled: self.spare_outputs.pop().unwrap_or_default(),
        };
        if self.send(&channel, message).is_err() {
            return Err(RunError::Cluster("worker 0 stopped".to_owned()));
        }
        if self.live {
            self.wait_for(self.advance_to)?;
        } else {
            while let Ok(message) = self.from_worker.try_recv() {
                self.receive(message)?;
            }
        }
        Ok(())
    }

    /// Sends `message` to worker 0, waiting while its channel is full (see
    /// [`Feeder::flush_on_stop`]).
    fn send(&mut self, channel: &Sender<ToWorker>, message: ToWorker) -> Result<(), ()> {
        let mut message = message;
        loop {
            match channel.send_timeout(message, STOP_POLL) {
                Ok(()) => return Ok(()),
                Err(SendTimeoutError::Timeout(back)) => {
                    message = back;
                    self.flush_on_stop();
                }
                Err(SendTimeoutError::Disconnected(_)) => return Err(()),
            }
        }
    }

    /// The next message from worker 0, waiting for it (see [`Feeder::flush_on_stop`]).
    fn next_message(&mut self) -> Result<FromWorker, ()> {
        loop {
            match self.from_worker.recv_timeout(STOP_POLL) {
                Ok(message) => return Ok(message),
                Err(RecvTimeoutError::Timeout) => self.flush_on_stop(),
                Err(RecvTimeoutError::Disconnected) => return Err(()),
            }
        }
    }

    /// While the calling thread waits for worker 0 — which may be in one long step — a
    /// stop request ([`stgflow_io::interrupt`]) flushes what is written so far at once: the
    /// run still stops cleanly when the worker comes back, and if the process is ended
    /// before that (a second signal, the command's grace period), the output of the
    /// completed time points written so far is not lost in a buffer.
    fn flush_on_stop(&mut self) {
        if !self.flushed_on_stop && stgflow_io::interrupt::requested().is_some() {
            self.flushed_on_stop = true;
            let _ = self.sink.flush();
        }
    }

    /// Receives output until everything before `upto` is written.
    fn wait_for(&mut self, upto: u64) -> Result<(), RunError> {
        while self.next_emit.is_some_and(|next| next < upto) {
            match self.next_message() {
                Ok(FromWorker::Done) | Err(_) => {
                    return Err(RunError::Cluster("worker 0 stopped".to_owned()));
                }
                Ok(message) => self.receive(message)?,
            }
        }
        Ok(())
    }

    fn receive(&mut self, message: FromWorker) -> Result<(), RunError> {
        let FromWorker::Output { upto, updates } = message else {
            return Ok(());
        };
        // Worker 0 sends each time point's output once, in output order: all of it below
        // `upto`; what cannot be written yet waits here.
        let mut updates = updates;
        debug_assert!(
            self.pending
                .last()
                .zip(updates.first())
                .is_none_or(|(a, b)| a.1 <= b.1),
            "output arrives in time order"
        );
        if self.pending.is_empty() {
            std::mem::swap(&mut self.pending, &mut updates);
        } else {
            self.pending.append(&mut updates);
        }
        crate::render::keep_spare(&mut self.spare_outputs, updates, SPARE_BUFFERS);
        let Some(mut next) = self.next_emit else {
            return Ok(());
        };
        let end = upto.min(self.advance_to);
        let mut at = 0;
        while next < end {
            let from = at;
            while at < self.pending.len() && self.pending[at].1 == next {
                at += 1;
            }
            let changes = self.pending[from..at]
                .iter()
                .map(|((pred, row), _, diff)| (*pred as PredId, &row[..], *diff));
            self.sink.emit_sorted(next, changes)?;
            self.summary.time_point(next);
            next += 1;
        }
        self.pending.drain(..at);
        self.next_emit = Some(next);
        Ok(())
    }

    /// Flushes the last batch, closes the input and writes the remaining output.
    fn finish(&mut self) -> Result<(), RunError> {
        if !self.batch.is_empty() || self.batch_start.is_some() {
            let live = std::mem::replace(&mut self.live, false);
            let sent = self.send_batch();
            self.live = live;
            sent?;
        }
        let Some(channel) = self.to_worker.take() else {
            return Ok(());
        };
        let finish = ToWorker::Finish {
            advance_to: self.advance_to,
            first: self.first.unwrap_or(0),
        };
        let _ = self.send(&channel, finish);
        loop {
            match self.next_message() {
                Ok(FromWorker::Done) | Err(_) => return Ok(()),
                Ok(message) => self.receive(message)?,
            }
        }
    }
}

impl<W: Write> TimePoints for Feeder<'_, W> {
    fn complete(&mut self, t: u64, input: Vec<(PredId, Row)>) -> Result<(), RunError> {
        self.batch_start.get_or_insert(t);
        self.feed_unit(t);
        // One hash and lookup per fact (the hash kept with it): what held before and holds
        // again costs nothing; what is new is +1; what is left of the previous time point
        // is −1.
        let mut now = std::mem::take(&mut self.spare);
        now.reserve(input.len());
        for fact in input {
            let hash = self.hasher.hash_one(&fact);
            if let Some(held) = self.previous.take(hash, &fact) {
                // Not in `now` yet: had it been there, it would have left `previous`.
                now.push_unique(hash, held);
            } else if !now.contains(hash, &fact) {
                self.batch
                    .push(fact.0 as u32, Row::from_slice(&fact.1), t, 1);
                now.push_unique(hash, fact);
            }
        }
        self.retract_previous(t);
        self.spare = std::mem::replace(&mut self.previous, now);
        self.fed_through(t)
    }

    /// A quiet stretch goes out in batches of at most `batch_points` time points like any
    /// other, so that output flows, memory stays bounded and a stop request is seen
    /// between batches even when the stretch is 10^9 time points long.
    fn quiet(&mut self, from: u64, to: u64) -> Result<(), RunError> {
        let mut from = from;
        while from < to {
            let start = *self.batch_start.get_or_insert(from);
            self.feed_unit(from);
            self.retract_previous(from);
            let end = to.min(start.saturating_add(self.batch_points).max(from + 1));
            self.fed_through(end - 1)?;
            from = end;
            if from < to {
                if let Some(stop) = stgflow_io::interrupt::requested() {
                    return Err(stop.into());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stgflow_lang::value::Value;

    /// The order `in_output_order` must produce, by a plain sort and consolidation.
    fn expected(updates: &[Update], rank: &[usize]) -> Vec<Update> {
        let mut sorted = updates.to_vec();
        sorted.sort_by(|((p, row), t, _), ((q, other), u, _)| {
            (t, rank[*p as usize], row).cmp(&(u, rank[*q as usize], other))
        });
        let mut out: Vec<Update> = Vec::new();
        for update in sorted {
            match out.last_mut() {
                Some(last) if last.0 == update.0 && last.1 == update.1 => last.2 += update.2,
                _ => out.push(update),
            }
        }
        out.retain(|u| u.2 != 0);
        out
    }

    /// Updates over `times`, with predicates out of name order, values of every kind,
    /// long symbols sharing a prefix, duplicates and cancelling pairs.
    fn updates(times: &[u64]) -> Vec<Update> {
        let values = [
            Value::sym("bbbbbbbbbb1"),
            Value::Int(-3),
            Value::sym("bbbbbbbbbb0"),
            Value::Float(2.5),
            Value::Int(1 << 40),
            Value::sym("a"),
        ];
        let mut out = Vec::new();
        for (i, &t) in times.iter().enumerate() {
            for (j, &v) in values.iter().enumerate() {
                let pred = ((i + j) % 3) as u32;
                let row: Row = [v, Value::Int((j % 2) as i64)].into_iter().collect();
                out.push(((pred, row.clone()), t, 1));
                if j % 3 == 0 {
                    out.push(((pred, row), t, -1));
                } else if j % 3 == 1 {
                    out.push(((pred, row), t, 1));
                }
            }
            out.push(((1, Row::new()), t, 1));
        }
        out.reverse();
        out
    }

    #[test]
    fn output_order_is_time_name_rank_arguments_consolidated_with_and_without_packed_keys() {
        // Predicate 0 sorts last by name, predicate 2 first.
        let rank = [2, 1, 0];
        for (times, in_time_order) in [
            (vec![7, 3, 5, 3, 9], false),
            (vec![0, 1 << 20, 5, 70_000, 1 << 20], false),
            // Time point by time point, as one operator's output comes.
            (vec![7, 3, 5, 3, 9], true),
            (vec![0, 1 << 20, 5, 70_000, 1 << 20], true),
        ] {
            let mut batch = updates(&times);
            if in_time_order {
                batch.sort_by_key(|u| u.1);
            }
            let want = expected(&batch, &rank);
            let mut into = vec![((0, Row::new()), 0, 1)];
            let mut order = Vec::new();
            in_output_order(&mut batch, &rank, 0, &mut order, &mut into);
            assert!(batch.is_empty());
            assert_eq!(into[0], ((0, Row::new()), 0, 1), "what was there stays");
            assert_eq!(&into[1..], &want[..], "times {times:?}, {in_time_order}");
        }
    }

    #[test]
    fn output_before_the_first_time_point_takes_effect_there() {
        let mut batch = vec![((0, Row::new()), 2, 1), ((0, Row::new()), 5, -1)];
        let (mut order, mut into) = (Vec::new(), Vec::new());
        in_output_order(&mut batch, &[0], 5, &mut order, &mut into);
        assert!(
            into.is_empty(),
            "+1 and −1 both land at 5 and cancel: {into:?}"
        );
    }
}
