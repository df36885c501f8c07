//! Running `stgflow` (or a peer) as a child process and measuring it: wall time, CPU time
//! (user + system) and peak resident memory, and in streaming mode the latency of each
//! time point's output.
//!
//! CPU time and peak RSS come from `getrusage(RUSAGE_CHILDREN)`, which sums CPU time over
//! every child a process has waited for and keeps the *largest* child's peak RSS forever.
//! Read in the harness itself, the second run would inherit the first run's peak. So each
//! measured command runs under a fresh copy of the harness (`stgflow-bench measure-one
//! FILE -- CMD…`), whose only child is the command: its `RUSAGE_CHILDREN` is exactly that
//! command's. The wrapper inherits stdin and stdout, so streaming runs pipe straight
//! through it; it writes its figures to FILE.
//!
//! Streaming latency: the feeder writes the stream one time point at a time. Time point t
//! is complete when the first fact of a later time point arrives (or stdin closes), so
//! its latency is from the moment that later time point was written and flushed to the
//! moment the first output line stamped `@t` (`--mode changes`) was read. Time points
//! without output have no latency sample. Without `pace` the feeder writes as fast as the
//! pipe takes it, so latencies include queueing behind earlier time points: that is the
//! latency under full load, an upper bound for a paced stream.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};

/// What one process used.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    pub wall: Duration,
    pub cpu: Duration,
    pub peak_rss_kib: u64,
}

/// The harness executable, which doubles as the measuring wrapper.
#[derive(Clone, Debug)]
pub struct Wrapper {
    pub harness: PathBuf,
    /// Where the wrappers leave their figures.
    pub scratch: PathBuf,
    /// How long one command may run before it is killed (`--timeout`).
    pub timeout: Option<Duration>,
}

/// The wrapper's exit code for a command it killed at its timeout (as timeout(1)'s).
pub const TIMED_OUT: u8 = 124;

/// A command started under the wrapper.
#[derive(Debug)]
pub struct Measured {
    child: Child,
    usage_file: PathBuf,
    what: String,
}

impl Wrapper {
    /// Starts `program args` under the wrapper with the given stdio.
    pub fn spawn(
        &self,
        program: &Path,
        args: &[OsString],
        stdin: Stdio,
        stdout: Stdio,
        stderr: Stdio,
    ) -> anyhow::Result<Measured> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let usage_file = self
            .scratch
            .join(format!("usage-{}-{n}.txt", std::process::id()));
        let mut command = Command::new(&self.harness);
        command.arg("measure-one").arg(&usage_file);
        if let Some(timeout) = self.timeout {
            command
                .arg("--timeout")
                .arg(timeout.as_secs_f64().to_string());
        }
        let child = command
            .arg("--")
            .arg(program)
            .args(args)
            .stdin(stdin)
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("cannot start {}", self.harness.display()))?;
        Ok(Measured {
            child,
            usage_file,
            what: format!("{} {}", program.display(), join_args(args)),
        })
    }
}

impl Measured {
    pub fn stdin(&mut self) -> Option<std::process::ChildStdin> {
        self.child.stdin.take()
    }

    pub fn stdout(&mut self) -> Option<std::process::ChildStdout> {
        self.child.stdout.take()
    }

    /// Stops the command (its wrapper and, through the closed pipes and the cluster's
    /// lost connection, the command) and waits for the wrapper.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.usage_file);
    }

    /// Waits for the command; fails when it exited non-zero, with its stderr if captured.
    pub fn finish(mut self) -> anyhow::Result<Usage> {
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        let status = self
            .child
            .wait()
            .context("waiting for the measured command")?;
        let text = std::fs::read_to_string(&self.usage_file);
        let _ = std::fs::remove_file(&self.usage_file);
        if status.code() == Some(i32::from(TIMED_OUT)) && text.is_err() {
            bail!("`{}` timed out and was killed", self.what);
        }
        if !status.success() {
            bail!(
                "`{}` failed ({status}){}{}",
                self.what,
                if stderr.is_empty() { "" } else { ":\n" },
                stderr.trim_end()
            );
        }
        let text =
            text.with_context(|| format!("no figures from the wrapper of `{}`", self.what))?;
        parse_usage(&text).ok_or_else(|| anyhow!("malformed figures from the wrapper: {text:?}"))
    }
}

fn join_args(args: &[OsString]) -> String {
    args.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn parse_usage(text: &str) -> Option<Usage> {
    let mut fields = text.split_whitespace().map(str::parse::<u64>);
    let wall = fields.next()?.ok()?;
    let cpu = fields.next()?.ok()?;
    let peak_rss_kib = fields.next()?.ok()?;
    Some(Usage {
        wall: Duration::from_nanos(wall),
        cpu: Duration::from_nanos(cpu),
        peak_rss_kib,
    })
}

/// The wrapper's side: runs `command`, waits, writes `wall_ns cpu_ns peak_rss_kib` to
/// `usage_file`, and exits with the command's code. With a `timeout`, the command runs in
/// a process group of its own, which is killed (whatever the command started) when it
/// runs longer; the wrapper then writes no figures and exits with [`TIMED_OUT`].
pub fn measure_one(usage_file: &Path, timeout: Option<Duration>, command: &[OsString]) -> ExitCode {
    let Some((program, args)) = command.split_first() else {
        eprintln!("error: measure-one needs a command after `--`");
        return ExitCode::from(2);
    };
    let started = Instant::now();
    let mut command = Command::new(program);
    command.args(args);
    if timeout.is_some() {
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
    }
    let status = command.spawn().and_then(|mut child| match timeout {
        None => child.wait().map(Some),
        Some(timeout) => wait_within(&mut child, started + timeout),
    });
    let status = match status {
        Ok(Some(status)) => status,
        Ok(None) => {
            eprintln!(
                "error: {} ran longer than {:.1} s (--timeout) and was killed",
                Path::new(program).display(),
                timeout.unwrap_or_default().as_secs_f64()
            );
            return ExitCode::from(TIMED_OUT);
        }
        Err(error) => {
            eprintln!(
                "error: cannot start {}: {error}",
                Path::new(program).display()
            );
            return ExitCode::from(127);
        }
    };
    let wall = started.elapsed();
    let usage = match nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN) {
        Ok(usage) => usage,
        Err(error) => {
            eprintln!("error: getrusage: {error}");
            return ExitCode::FAILURE;
        }
    };
    let micros = |tv: nix::sys::time::TimeVal| {
        tv.tv_sec() as u64 * 1_000_000_000 + tv.tv_usec() as u64 * 1_000
    };
    let cpu = micros(usage.user_time()) + micros(usage.system_time());
    // Linux reports ru_maxrss in KiB.
    let rss = usage.max_rss().max(0) as u64;
    if let Err(error) = std::fs::write(usage_file, format!("{} {cpu} {rss}\n", wall.as_nanos())) {
        eprintln!("error: cannot write {}: {error}", usage_file.display());
        return ExitCode::FAILURE;
    }
    match status.code() {
        Some(code) => ExitCode::from(code.clamp(0, 255) as u8),
        // Killed by a signal: the shell's convention, 128 + signal.
        None => ExitCode::from(
            std::os::unix::process::ExitStatusExt::signal(&status)
                .map_or(1, |s| (128 + s).clamp(0, 255) as u8),
        ),
    }
}

/// Waits for `child` until `deadline`; past it, kills its process group (`child` leads
/// one) and answers `None`.
fn wait_within(
    child: &mut Child,
    deadline: Instant,
) -> io::Result<Option<std::process::ExitStatus>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            let group = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A TD fact stream split into time points: `(time, the lines of that time point)`.
/// Reads one fact per line with the time last, as the generators write it (`p(1,1,7).`).
pub fn time_points(stream: &Path) -> anyhow::Result<Vec<(u64, Vec<u8>)>> {
    let file = File::open(stream).with_context(|| format!("cannot open {}", stream.display()))?;
    let mut points: Vec<(u64, Vec<u8>)> = Vec::new();
    for (n, line) in BufReader::new(file).split(b'\n').enumerate() {
        let line = line.with_context(|| format!("reading {}", stream.display()))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let time = fact_time(&line).ok_or_else(|| {
            anyhow!(
                "{}:{}: expected one fact `pred(…,TIME).` per line",
                stream.display(),
                n + 1
            )
        })?;
        match points.last_mut() {
            Some((t, lines)) if *t == time => {
                lines.extend_from_slice(&line);
                lines.push(b'\n');
            }
            _ => {
                let mut lines = line;
                lines.push(b'\n');
                points.push((time, lines));
            }
        }
    }
    Ok(points)
}

/// The time of `pred(…,TIME).`: the digits before the closing `).`.
fn fact_time(line: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(line).ok()?.trim_end();
    let inner = text.strip_suffix(").")?;
    let digits = inner.rsplit([',', '(']).next()?.trim();
    digits.parse().ok()
}

/// The time stamp of a `--mode changes` line: `+q(1,1) @7` → 7.
pub fn change_time(line: &str) -> Option<u64> {
    line.trim_end().rsplit_once(" @")?.1.parse().ok()
}

/// Feeds `points` to `stdin` one time point at a time (at most `pace` time points per
/// second when given) while reading `stdout`; returns the latency of every time point
/// that printed something, in microseconds, in time order.
pub fn stream_through(
    points: &[(u64, Vec<u8>)],
    mut stdin: impl Write + Send,
    stdout: impl Read + Send,
    pace: Option<f64>,
) -> anyhow::Result<Vec<f64>> {
    let (completed, seen) = std::thread::scope(|scope| {
        let reader = scope.spawn(move || -> io::Result<HashMap<u64, Instant>> {
            let mut seen = HashMap::new();
            for line in BufReader::with_capacity(1 << 16, stdout).lines() {
                let line = line?;
                if let Some(t) = change_time(&line) {
                    seen.entry(t).or_insert_with(Instant::now);
                }
            }
            Ok(seen)
        });
        let started = Instant::now();
        // completed[i] = when time point points[i] was completed (the next one written).
        let mut completed: Vec<Instant> = Vec::with_capacity(points.len());
        let mut write_error = None;
        for (i, (_, lines)) in points.iter().enumerate() {
            if let Some(rate) = pace {
                let due = started + Duration::from_secs_f64(i as f64 / rate);
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
            let now = Instant::now();
            if i > 0 {
                completed.push(now);
            }
            if let Err(error) = stdin.write_all(lines).and_then(|()| stdin.flush()) {
                write_error = Some(error);
                break;
            }
        }
        drop(stdin);
        completed.push(Instant::now());
        let seen = reader.join();
        match (write_error, seen) {
            (Some(error), _) => Err(anyhow!("writing the stream to stgflow: {error}")),
            (None, Ok(Ok(seen))) => Ok((completed, seen)),
            (None, Ok(Err(error))) => Err(anyhow!("reading stgflow's output: {error}")),
            (None, Err(_)) => Err(anyhow!("the output reader panicked")),
        }
    })?;
    let mut latencies = Vec::new();
    for ((t, _), done) in points.iter().zip(&completed) {
        if let Some(out) = seen.get(t) {
            latencies.push(out.saturating_duration_since(*done).as_secs_f64() * 1e6);
        }
    }
    Ok(latencies)
}

/// The median of `values`: the middle one, or the mean of the two middle ones when there
/// is an even number of them (of two runs, their mean, not the faster); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

impl Usage {
    /// The median of each measure of `runs` on its own ([`median`]).
    pub fn median(runs: &[Usage]) -> Option<Usage> {
        let of = |f: &dyn Fn(&Usage) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
        Some(Usage {
            wall: Duration::from_secs_f64(of(&|u| u.wall.as_secs_f64())?),
            cpu: Duration::from_secs_f64(of(&|u| u.cpu.as_secs_f64())?),
            peak_rss_kib: of(&|u| u.peak_rss_kib as f64)? as u64,
        })
    }
}

/// The `q`-quantile (0..=1) of `values` by the nearest-rank method; `None` when empty.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

/// Picks `n` distinct free loopback ports for a timely cluster and writes a hostfile.
pub fn loopback_hostfile(n: usize, path: &Path) -> anyhow::Result<()> {
    // Hold every listener until all are chosen, so the ports differ.
    let listeners: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<io::Result<_>>()
        .context("choosing free loopback ports")?;
    let mut text = String::new();
    for listener in &listeners {
        text.push_str(&format!("{}\n", listener.local_addr()?));
    }
    drop(listeners);
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fact_and_change_times() {
        assert_eq!(fact_time(b"p(1,1,7)."), Some(7));
        assert_eq!(fact_time(b"tick(c,12345).  "), Some(12345));
        assert_eq!(fact_time(b"s(3)."), Some(3));
        assert_eq!(fact_time(b"p(1,1,x)."), None);
        assert_eq!(fact_time(b"p(1,1,7)"), None);
        assert_eq!(change_time("+q(1,1) @7"), Some(7));
        assert_eq!(change_time("-alarm @0\n"), Some(0));
        assert_eq!(change_time("q(1,1) [3,4)"), None);
    }

    #[test]
    fn a_median_of_an_even_number_of_runs_is_the_mean_of_the_middle_two() {
        assert_eq!(median(&[3.0, 1.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[]), None);
        let run = |wall: f64, rss: u64| Usage {
            wall: Duration::from_secs_f64(wall),
            cpu: Duration::from_secs_f64(wall * 2.0),
            peak_rss_kib: rss,
        };
        let both = Usage::median(&[run(1.0, 100), run(2.0, 300)]).map(|u| (u.wall, u.peak_rss_kib));
        assert_eq!(both, Some((Duration::from_secs_f64(1.5), 200)));
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let values = [5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!(quantile(&values, 0.5), Some(3.0));
        assert_eq!(quantile(&values, 0.99), Some(5.0));
        assert_eq!(quantile(&values, 0.0), Some(1.0));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn usage_lines_parse() {
        let usage = parse_usage("1500000000 250000000 2048\n").unwrap();
        assert_eq!(usage.wall, Duration::from_millis(1500));
        assert_eq!(usage.cpu, Duration::from_millis(250));
        assert_eq!(usage.peak_rss_kib, 2048);
        assert_eq!(parse_usage("1 2"), None);
    }

    #[test]
    fn time_points_group_lines_and_reject_other_shapes() {
        let dir = std::env::temp_dir().join(format!("stgflow-bench-tp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.facts");
        std::fs::write(&good, "p(1,1,0).\np(2,2,0).\n\np(3,3,2).\n").unwrap();
        let points = time_points(&good).unwrap();
        assert_eq!(points.len(), 2);
        assert_eq!(points[0], (0, b"p(1,1,0).\np(2,2,0).\n".to_vec()));
        assert_eq!(points[1].0, 2);
        let bad = dir.join("bad.facts");
        std::fs::write(&bad, "p(1,1,0).\np(2,2,0). p(3,3,x).\n").unwrap();
        let error = time_points(&bad).unwrap_err().to_string();
        assert!(
            error.ends_with("bad.facts:2: expected one fact `pred(…,TIME).` per line"),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
