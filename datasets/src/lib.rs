//! Seeded stream generators for stgflow's examples, tests and benchmarks.
//!
//! Every generator writes a TD fact stream to any [`Write`]: one fact per line,
//! `pred(arg,…,time).`, no spaces, times nondecreasing, so the output can be fed straight
//! to `stgflow run` or to `stgflow_io::stream::FactReader`.
//!
//! * [`device_fleet`] — the device-safety workload of [`examples::DEVICE_SAFETY_TDL`]
//!   (Example 1 of the STG paper): `repair(dI,T).` and `warning(dI,T).` for devices
//!   `d0..d{N-1}`, each an independent coin flip per device per time point. It is the
//!   throughput and memory workload: few devices over many time points is a long, sparse
//!   stream; many devices over few time points a wide, dense one.
//! * [`one_per_point`] — `tick(c,T).` at every time point: the smallest stream that still
//!   makes an evaluator visit every time point, for per-time-point overhead.
//!
//! Pitfalls, stated up front:
//!
//! * The output is a function of the configuration alone, seed included, on every platform
//!   and with every dependency version: the generator uses its own SplitMix64 rather than
//!   `rand`'s `SmallRng`, whose algorithm is allowed to change between releases and
//!   platforms. Benchmark figures recorded against a seed stay reproducible.
//! * Generation costs time in proportion to the facts written, not to devices × time
//!   points: the gaps between coin flips that come up heads are drawn from the geometric
//!   distribution. A stream of 10 devices over 10⁹ time points at rate 10⁻⁶ is instant.
//! * The coin flips are numbered time-major (`(T - start) × devices + I`) and the heads
//!   depend only on the seed, the rate and the number of flips. Two configurations with
//!   the same seed and the same devices × time points therefore share their heads, laid
//!   out differently (1000 devices × 1000 points and 10 × 100 000 both have 20 076 facts
//!   at seed 1). Each is a fair sample; just do not read them as independent ones.
//! * The stream has no fact at a time point where every coin came up tails. The evaluator's
//!   timeline runs from the first to the last fact, so the number of time points it
//!   evaluates can be a little smaller than `time_points`; pass `--from`/`--until` to
//!   `stgflow run` to pin it.

use std::io::{self, Write};

pub mod convert;

/// The example programs the generators are meant for, as text.
pub mod examples {
    /// `safe`/`trusted` devices from `repair`/`warning` events; input for [`super::device_fleet`].
    pub const DEVICE_SAFETY_TDL: &str = include_str!("../examples/device_safety.tdl");
    /// Event Calculus inertia over `init` events; input for [`super::inertia`].
    pub const INERTIA_TDL: &str = include_str!("../examples/inertia.tdl");
}

/// A configuration the generators refuse, or an output that fails.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// A rate is not a probability (outside `[0, 1]`, or NaN).
    #[error("--{name} must be a probability between 0 and 1, not {value}")]
    Rate { name: &'static str, value: f64 },
    /// The last time point or the number of coin flips does not fit in a `u64`.
    #[error("{0} does not fit in 64 bits")]
    TooLarge(&'static str),
    #[error("cannot write the stream: {0}")]
    Io(#[from] io::Error),
}

/// What a generator wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub facts: u64,
    /// Time of the first fact, `None` for an empty stream.
    pub first: Option<u64>,
    /// Time of the last fact.
    pub last: Option<u64>,
}

/// The device-safety workload: `repair(dI,T).` and `warning(dI,T).`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceFleet {
    /// Devices `d0..d{devices-1}`.
    pub devices: u64,
    /// Time points `start..start+time_points`.
    pub time_points: u64,
    pub start: u64,
    /// Probability of a repair, per device per time point.
    pub repair_rate: f64,
    /// Probability of a warning, per device per time point.
    pub warning_rate: f64,
    pub seed: u64,
}

impl Default for DeviceFleet {
    fn default() -> Self {
        DeviceFleet {
            devices: 100,
            time_points: 1000,
            start: 0,
            repair_rate: 0.01,
            warning_rate: 0.01,
            seed: 1,
        }
    }
}

/// Writes the device-fleet stream to `out`: per time point, devices in order, a device's
/// repair before its warning. Repairs and warnings draw from separate random streams, so
/// changing one rate leaves the other predicate's facts as they were.
pub fn device_fleet(config: &DeviceFleet, out: impl Write) -> Result<Summary, GenerateError> {
    let repair_rate = probability("repair-rate", config.repair_rate)?;
    let warning_rate = probability("warning-rate", config.warning_rate)?;
    last_time(config.start, config.time_points)?;
    let flips = config
        .devices
        .checked_mul(config.time_points)
        .ok_or(GenerateError::TooLarge("devices × time points"))?;
    let mut seeds = SplitMix64::new(config.seed);
    let mut repairs = Heads::new(SplitMix64::new(seeds.next_u64()), repair_rate, flips);
    let mut warnings = Heads::new(SplitMix64::new(seeds.next_u64()), warning_rate, flips);
    let mut writer = FactWriter::new(out);
    loop {
        let (name, flip) = match (repairs.peek(), warnings.peek()) {
            (None, None) => break,
            (Some(r), Some(w)) if w < r => (WARNING, warnings.advance()),
            (Some(_), _) => (REPAIR, repairs.advance()),
            (None, Some(_)) => (WARNING, warnings.advance()),
        };
        // Flips are numbered time-major, so time never goes backwards.
        let time = config.start + flip / config.devices;
        writer.device_fact(name, flip % config.devices, time)?;
    }
    writer.finish()
}

const REPAIR: &[u8] = b"repair(d";
const WARNING: &[u8] = b"warning(d";

/// `tick(c,T).` at each of `time_points` time points from `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnePerPoint {
    pub time_points: u64,
    pub start: u64,
}

impl Default for OnePerPoint {
    fn default() -> Self {
        OnePerPoint {
            time_points: 1000,
            start: 0,
        }
    }
}

/// Writes one `tick(c,T).` per time point to `out`.
pub fn one_per_point(config: &OnePerPoint, out: impl Write) -> Result<Summary, GenerateError> {
    let Some(last) = last_time(config.start, config.time_points)? else {
        return FactWriter::new(out).finish();
    };
    let mut writer = FactWriter::new(out);
    for time in config.start..=last {
        writer.fact(b"tick(c", time)?;
    }
    writer.finish()
}

/// Laser's micro-benchmark stream: `atoms_per_point` new, unique atoms `p(N,N,T).` at
/// every time point (N counts up over the whole stream, so no atom repeats), for the
/// window programs `q(A,B) :- ⊞n ♢ p(A,B)` and friends; with [`Constants`] other than
/// integers, the N are fresh names (`p(id17,b17,T).`) or IRIs, as real logs have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UniqueAtoms {
    pub atoms_per_point: u64,
    /// What the atoms' arguments are.
    pub constants: Constants,
    pub time_points: u64,
    pub start: u64,
    /// Also write the 0-ary atom `s(T).` at every `extra_every`-th time point (from the
    /// first), for programs such as `q(A,B) :- ⊞10 ♢ p(A,B), not s`; 0 for none.
    pub extra_every: u64,
}

/// The constants of a generated stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Constants {
    /// Integers: `p(17,17,T).`
    #[default]
    Integers,
    /// Fresh short names, each new in the stream: `p(id17,b17,T).`
    Names,
    /// Fresh IRIs, longer than a value holds inline:
    /// `p("http://example.org/stream/event#17","http://example.org/stream/object#17",T).`
    Iris,
}

impl Constants {
    /// Writes the `n`-th constant of the `arg`-th argument (0 or 1).
    fn write(self, buffer: &mut Vec<u8>, arg: usize, n: u64) {
        match self {
            Constants::Integers => push_decimal(buffer, n),
            Constants::Names => {
                buffer.extend_from_slice(if arg == 0 { b"id" } else { b"b" });
                push_decimal(buffer, n);
            }
            Constants::Iris => {
                buffer.extend_from_slice(if arg == 0 {
                    b"\"http://example.org/stream/event#"
                } else {
                    b"\"http://example.org/stream/object#"
                });
                push_decimal(buffer, n);
                buffer.push(b'"');
            }
        }
    }
}

/// Writes the unique-atoms stream to `out`.
pub fn unique_atoms(config: &UniqueAtoms, out: impl Write) -> Result<Summary, GenerateError> {
    let Some(last) = last_time(config.start, config.time_points)? else {
        return FactWriter::new(out).finish();
    };
    let mut writer = FactWriter::new(out);
    let mut n: u64 = 0;
    for time in config.start..=last {
        for _ in 0..config.atoms_per_point {
            writer.buffer.extend_from_slice(b"p(");
            config.constants.write(&mut writer.buffer, 0, n);
            writer.buffer.push(b',');
            config.constants.write(&mut writer.buffer, 1, n);
            writer.buffer.push(b',');
            writer.end_fact(time)?;
            n += 1;
        }
        if config.extra_every > 0 && (time - config.start) % config.extra_every == 0 {
            writer.buffer.extend_from_slice(b"s(");
            writer.end_fact(time)?;
        }
    }
    writer.finish()
}

/// A slowly changing graph for same-time recursion (`reach(X,Y,T) :- e(X,Y,T).`,
/// `reach(X,Z,T) :- reach(X,Y,T), e(Y,Z,T).`): `edges` random edges `e(nX,nY,T).` over
/// `nodes` nodes, all listed at every time point (a TD fact holds only where it is
/// given), `changes` of them replaced by new random edges from one time point to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Graph {
    pub nodes: u64,
    pub edges: u64,
    pub changes: u64,
    pub time_points: u64,
    pub start: u64,
    pub seed: u64,
}

/// Writes the graph stream to `out`.
pub fn graph(config: &Graph, out: impl Write) -> Result<Summary, GenerateError> {
    let Some(last) = last_time(config.start, config.time_points)? else {
        return FactWriter::new(out).finish();
    };
    let mut writer = FactWriter::new(out);
    let mut rng = SplitMix64::new(config.seed);
    let nodes = config.nodes.max(1);
    let random_edge = |rng: &mut SplitMix64| (rng.next_u64() % nodes, rng.next_u64() % nodes);
    let mut edges: Vec<(u64, u64)> = (0..config.edges).map(|_| random_edge(&mut rng)).collect();
    let mut sorted = Vec::with_capacity(edges.len());
    for time in config.start..=last {
        if time > config.start && !edges.is_empty() {
            for _ in 0..config.changes {
                let at = (rng.next_u64() % edges.len() as u64) as usize;
                edges[at] = random_edge(&mut rng);
            }
        }
        // A set of edges: each once per time point, in order.
        sorted.clear();
        sorted.extend_from_slice(&edges);
        sorted.sort_unstable();
        sorted.dedup();
        for &(from, to) in &sorted {
            writer.buffer.extend_from_slice(b"e(n");
            push_decimal(&mut writer.buffer, from);
            writer.buffer.extend_from_slice(b",n");
            push_decimal(&mut writer.buffer, to);
            writer.buffer.push(b',');
            writer.end_fact(time)?;
        }
    }
    writer.finish()
}

/// Traffic lights for `datasets/examples/traffic_lights.tdl` (rules 22–24 of the paper):
/// `lights` lights `l0…`, each started red at two consecutive time points, light I at
/// `start + I mod 3`, so the lights run out of phase. The program then derives the
/// endless red, red, green cycle by itself: pass `--until` to `stgflow run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrafficLights {
    pub lights: u64,
    pub start: u64,
}

/// Writes the traffic-lights stream to `out`.
pub fn traffic_lights(config: &TrafficLights, out: impl Write) -> Result<Summary, GenerateError> {
    let mut writer = FactWriter::new(out);
    config
        .start
        .checked_add(3)
        .ok_or(GenerateError::TooLarge("start + 3"))?;
    // Time-ordered: all lights starting at `start` first, and so on.
    for time in config.start..config.start + 4 {
        for light in 0..config.lights {
            let phase = config.start + light % 3;
            if time == phase || time == phase + 1 {
                writer.device_fact(b"red(l", light, time)?;
            }
        }
    }
    writer.finish()
}

/// Event Calculus inertia: `events_per_point` events `init(fF,vV,T).` per time point, each
/// setting a random fluent of `fluents` to one of `values` values, for
/// `datasets/examples/inertia.tdl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inertia {
    pub fluents: u64,
    pub values: u64,
    pub events_per_point: u64,
    pub time_points: u64,
    pub start: u64,
    pub seed: u64,
}

/// Writes the inertia stream to `out`.
pub fn inertia(config: &Inertia, out: impl Write) -> Result<Summary, GenerateError> {
    let Some(last) = last_time(config.start, config.time_points)? else {
        return FactWriter::new(out).finish();
    };
    let mut writer = FactWriter::new(out);
    let mut rng = SplitMix64::new(config.seed);
    let fluents = config.fluents.max(1);
    let values = config.values.max(1);
    let mut events: Vec<(u64, u64)> = Vec::with_capacity(config.events_per_point as usize);
    for time in config.start..=last {
        events.clear();
        for _ in 0..config.events_per_point {
            events.push((rng.next_u64() % fluents, rng.next_u64() % values));
        }
        // One event per fluent and time point: a fluent set to two values at once is
        // not an inertia workload.
        events.sort_unstable_by_key(|&(f, _)| f);
        events.dedup_by_key(|&mut (f, _)| f);
        for &(fluent, value) in &events {
            writer.buffer.extend_from_slice(b"init(f");
            push_decimal(&mut writer.buffer, fluent);
            writer.buffer.extend_from_slice(b",v");
            push_decimal(&mut writer.buffer, value);
            writer.buffer.push(b',');
            writer.end_fact(time)?;
        }
    }
    writer.finish()
}

fn probability(name: &'static str, value: f64) -> Result<f64, GenerateError> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(GenerateError::Rate { name, value })
    }
}

/// The last time point, `None` when there are none; an error when it overflows.
fn last_time(start: u64, time_points: u64) -> Result<Option<u64>, GenerateError> {
    match time_points.checked_sub(1) {
        None => Ok(None),
        Some(span) => start
            .checked_add(span)
            .map(Some)
            .ok_or(GenerateError::TooLarge("start + time points")),
    }
}

/// SplitMix64 (Steele, Lea and Flood, 2014): tiny, fast, and fixed forever, which is what
/// a dataset seed needs.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `(0, 1]`, so that its logarithm is finite.
    fn unit_open_closed(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The flips, among `0..flips`, of a coin with probability `p` that come up heads, in
/// order, found by drawing the geometric gaps between them.
#[derive(Debug)]
struct Heads {
    rng: SplitMix64,
    /// `ln(1 - p)`; `-inf` for `p = 1`.
    log_tails: f64,
    flips: u64,
    next: Option<u64>,
}

impl Heads {
    fn new(rng: SplitMix64, p: f64, flips: u64) -> Self {
        let mut heads = Heads {
            rng,
            log_tails: (-p).ln_1p(),
            flips,
            next: None,
        };
        if p > 0.0 {
            heads.next = heads.after(0);
        }
        heads
    }

    fn peek(&self) -> Option<u64> {
        self.next
    }

    /// Returns the current head and moves to the next one. Call only after `peek` is `Some`.
    fn advance(&mut self) -> u64 {
        let current = self.next.unwrap_or(self.flips);
        self.next = current.checked_add(1).and_then(|from| self.after(from));
        current
    }

    /// The first head at or after flip `from`.
    fn after(&mut self, from: u64) -> Option<u64> {
        // Failures before the first success: floor(ln U / ln(1-p)). The `as` cast
        // saturates, so a gap beyond u64 (tiny p) ends the sequence below.
        let gap = (self.rng.unit_open_closed().ln() / self.log_tails) as u64;
        from.checked_add(gap).filter(|&flip| flip < self.flips)
    }
}

/// Formats facts into its own buffer and hands it to the output in large writes.
struct FactWriter<W: Write> {
    out: W,
    buffer: Vec<u8>,
    /// The current time, formatted, with its `).\n`.
    time_text: Vec<u8>,
    summary: Summary,
}

const FLUSH_AT: usize = 1 << 16;

impl<W: Write> FactWriter<W> {
    fn new(out: W) -> Self {
        FactWriter {
            out,
            buffer: Vec::with_capacity(FLUSH_AT + 128),
            time_text: Vec::new(),
            summary: Summary::default(),
        }
    }

    /// `{prefix},{time}).` where `prefix` is e.g. `tick(c`.
    fn fact(&mut self, prefix: &[u8], time: u64) -> io::Result<()> {
        self.buffer.extend_from_slice(prefix);
        self.buffer.push(b',');
        self.end_fact(time)
    }

    /// `{prefix}{device},{time}).` where `prefix` is e.g. `repair(d`.
    fn device_fact(&mut self, prefix: &[u8], device: u64, time: u64) -> io::Result<()> {
        self.buffer.extend_from_slice(prefix);
        push_decimal(&mut self.buffer, device);
        self.buffer.push(b',');
        self.end_fact(time)
    }

    fn end_fact(&mut self, time: u64) -> io::Result<()> {
        if self.summary.last != Some(time) {
            self.time_text.clear();
            push_decimal(&mut self.time_text, time);
            self.time_text.extend_from_slice(b").\n");
            self.summary.first.get_or_insert(time);
            self.summary.last = Some(time);
        }
        self.buffer.extend_from_slice(&self.time_text);
        self.summary.facts += 1;
        if self.buffer.len() >= FLUSH_AT {
            self.out.write_all(&self.buffer)?;
            self.buffer.clear();
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Summary, GenerateError> {
        self.out.write_all(&self.buffer)?;
        self.out.flush()?;
        Ok(self.summary)
    }
}

fn push_decimal(buffer: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buffer.extend_from_slice(&digits[at..]);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn fleet(config: &DeviceFleet) -> (String, Summary) {
        let mut out = Vec::new();
        let summary = device_fleet(config, &mut out).unwrap();
        (String::from_utf8(out).unwrap(), summary)
    }

    /// `(name, device, time)` of each line, checking the line's shape on the way.
    fn parse(text: &str) -> Vec<(&str, u64, u64)> {
        text.lines()
            .map(|line| {
                let (name, rest) = line.split_once("(d").unwrap();
                let (device, rest) = rest.split_once(',').unwrap();
                let time = rest.strip_suffix(").").unwrap();
                (name, device.parse().unwrap(), time.parse().unwrap())
            })
            .collect()
    }

    #[test]
    fn device_fleet_same_seed_same_output() {
        let config = DeviceFleet::default();
        assert_eq!(fleet(&config), fleet(&config));
        let other = fleet(&DeviceFleet { seed: 2, ..config });
        assert_ne!(fleet(&config).0, other.0);
    }

    #[test]
    fn device_fleet_seed_1_is_stable() {
        // Pins the generator: a change here changes every recorded benchmark input.
        let config = DeviceFleet {
            devices: 10,
            time_points: 100,
            ..DeviceFleet::default()
        };
        let (text, summary) = fleet(&config);
        let first: Vec<&str> = text.lines().take(3).collect();
        assert_eq!(
            (summary.facts, first),
            (SEED_1_FACTS, SEED_1_FIRST.to_vec())
        );
    }

    const SEED_1_FACTS: u64 = 16;
    const SEED_1_FIRST: [&str; 3] = ["warning(d5,7).", "repair(d9,9).", "repair(d5,10)."];

    #[test]
    fn splitmix64_matches_the_reference_implementation() {
        // First outputs of Vigna's splitmix64.c seeded with 0.
        let mut rng = SplitMix64::new(0);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(
            first,
            [
                0xe220_a839_7b1d_cdaf,
                0x6e78_9e6a_a1b9_65f4,
                0x06c4_5d18_8009_454f
            ]
        );
    }

    #[test]
    fn device_fleet_100_devices_1000_points_times_nondecreasing_and_in_range() {
        let config = DeviceFleet {
            start: 50,
            ..DeviceFleet::default()
        };
        let (text, summary) = fleet(&config);
        let facts = parse(&text);
        assert!(facts.windows(2).all(|w| w[0].2 <= w[1].2));
        assert!(
            facts
                .iter()
                .all(|&(_, d, t)| d < 100 && (50..1050).contains(&t))
        );
        assert_eq!(summary.facts, facts.len() as u64);
        assert_eq!(summary.first, facts.first().map(|f| f.2));
        assert_eq!(summary.last, facts.last().map(|f| f.2));
        let lines: Vec<&str> = text.lines().collect();
        let mut sorted = lines.clone();
        sorted.dedup();
        assert_eq!(sorted.len(), lines.len(), "no fact twice in a row");
    }

    #[test]
    fn device_fleet_1000_devices_1000_points_counts_match_rates() {
        let config = DeviceFleet {
            devices: 1000,
            repair_rate: 0.02,
            warning_rate: 0.005,
            ..DeviceFleet::default()
        };
        let (text, _) = fleet(&config);
        let facts = parse(&text);
        let repairs = facts.iter().filter(|f| f.0 == "repair").count() as f64;
        let warnings = facts.iter().filter(|f| f.0 == "warning").count() as f64;
        // Expected 20000 and 5000; a binomial's standard deviation is ~140 and ~70.
        assert!((repairs - 20_000.0).abs() < 1_000.0, "{repairs} repairs");
        assert!((warnings - 5_000.0).abs() < 500.0, "{warnings} warnings");
        // Heads spread over devices and time, not bunched at the start.
        let late = facts.iter().filter(|f| f.2 >= 500).count() as f64;
        assert!((late / facts.len() as f64 - 0.5).abs() < 0.05);
        let high = facts.iter().filter(|f| f.1 >= 500).count() as f64;
        assert!((high / facts.len() as f64 - 0.5).abs() < 0.05);
    }

    #[test]
    fn device_fleet_rate_0_and_1() {
        let config = DeviceFleet {
            devices: 3,
            time_points: 2,
            repair_rate: 1.0,
            warning_rate: 0.0,
            ..DeviceFleet::default()
        };
        let (text, summary) = fleet(&config);
        assert_eq!(
            text,
            "repair(d0,0).\nrepair(d1,0).\nrepair(d2,0).\nrepair(d0,1).\nrepair(d1,1).\nrepair(d2,1).\n"
        );
        assert_eq!(summary.facts, 6);
        let both = fleet(&DeviceFleet {
            devices: 1,
            time_points: 1,
            repair_rate: 1.0,
            warning_rate: 1.0,
            ..DeviceFleet::default()
        });
        assert_eq!(both.0, "repair(d0,0).\nwarning(d0,0).\n");
    }

    #[test]
    fn device_fleet_repairs_do_not_depend_on_the_warning_rate() {
        let config = DeviceFleet::default();
        let repairs = |text: &str| {
            text.lines()
                .filter(|l| l.starts_with("repair"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let quiet = fleet(&DeviceFleet {
            warning_rate: 0.0,
            ..config
        });
        let noisy = fleet(&DeviceFleet {
            warning_rate: 0.3,
            ..config
        });
        assert_eq!(repairs(&quiet.0), repairs(&noisy.0));
    }

    #[test]
    fn device_fleet_10_devices_1e12_points_is_sparse_and_fast() {
        let config = DeviceFleet {
            devices: 10,
            time_points: 1_000_000_000_000,
            repair_rate: 1e-9,
            warning_rate: 1e-9,
            ..DeviceFleet::default()
        };
        let (text, summary) = fleet(&config);
        // Expected 2 × 10⁴ facts; drawn in milliseconds, not by 2 × 10¹³ coin flips.
        assert!(
            (15_000..25_000).contains(&summary.facts),
            "{} facts",
            summary.facts
        );
        assert_eq!(parse(&text).len() as u64, summary.facts);
    }

    #[test]
    fn device_fleet_rejects_bad_rates_and_overflow() {
        for rate in [-0.1, 1.5, f64::NAN, f64::INFINITY] {
            let config = DeviceFleet {
                repair_rate: rate,
                ..DeviceFleet::default()
            };
            assert!(matches!(
                device_fleet(&config, io::sink()),
                Err(GenerateError::Rate { .. })
            ));
        }
        let late = DeviceFleet {
            start: u64::MAX,
            time_points: 2,
            ..DeviceFleet::default()
        };
        assert!(matches!(
            device_fleet(&late, io::sink()),
            Err(GenerateError::TooLarge(_))
        ));
        let wide = DeviceFleet {
            devices: u64::MAX,
            time_points: 2,
            ..DeviceFleet::default()
        };
        assert!(matches!(
            device_fleet(&wide, io::sink()),
            Err(GenerateError::TooLarge(_))
        ));
        // The very last representable time point is fine.
        let last = DeviceFleet {
            start: u64::MAX,
            time_points: 1,
            devices: 1,
            repair_rate: 1.0,
            ..DeviceFleet::default()
        };
        assert_eq!(fleet(&last).0, format!("repair(d0,{}).\n", u64::MAX));
    }

    #[test]
    fn device_fleet_empty() {
        for (devices, time_points) in [(0, 1000), (100, 0)] {
            let config = DeviceFleet {
                devices,
                time_points,
                ..DeviceFleet::default()
            };
            assert_eq!(fleet(&config), (String::new(), Summary::default()));
        }
    }

    #[test]
    fn one_per_point_ticks_every_point() {
        let mut out = Vec::new();
        let summary = one_per_point(
            &OnePerPoint {
                time_points: 3,
                start: 9,
            },
            &mut out,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "tick(c,9).\ntick(c,10).\ntick(c,11).\n"
        );
        assert_eq!(
            summary,
            Summary {
                facts: 3,
                first: Some(9),
                last: Some(11)
            }
        );
        let empty = one_per_point(
            &OnePerPoint {
                time_points: 0,
                start: 0,
            },
            io::sink(),
        )
        .unwrap();
        assert_eq!(empty, Summary::default());
    }

    #[test]
    fn one_per_point_large_stream_crosses_buffer_flushes() {
        let mut out = Vec::new();
        let summary = one_per_point(
            &OnePerPoint {
                time_points: 100_000,
                start: 0,
            },
            &mut out,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(summary.facts, 100_000);
        assert_eq!(text.lines().count(), 100_000);
        assert_eq!(text.lines().last(), Some("tick(c,99999)."));
    }

    #[test]
    fn push_decimal_edges() {
        for n in [0, 7, 10, 99, 100, 1234567890, u64::MAX] {
            let mut buffer = Vec::new();
            push_decimal(&mut buffer, n);
            assert_eq!(buffer, n.to_string().into_bytes());
        }
    }

    #[test]
    fn the_example_program_is_bundled() {
        assert!(examples::DEVICE_SAFETY_TDL.contains("trusted(X, T)"));
        assert!(examples::INERTIA_TDL.contains("holds(F, V, T)"));
    }

    #[test]
    fn unique_atoms_with_an_extra_atom_every_3_points() {
        let mut out = Vec::new();
        let config = UniqueAtoms {
            atoms_per_point: 2,
            constants: Constants::Integers,
            time_points: 7,
            start: 10,
            extra_every: 3,
        };
        let summary = unique_atoms(&config, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let extras: Vec<&str> = text.lines().filter(|l| l.starts_with("s(")).collect();
        assert_eq!(extras, ["s(10).", "s(13).", "s(16)."]);
        assert_eq!(summary.facts, 14 + 3);
        assert!(
            text.starts_with("p(0,0,10).\np(1,1,10).\ns(10).\np(2,2,11).\n"),
            "{text}"
        );
    }

    #[test]
    fn unique_atoms_with_fresh_names_or_iris() {
        let text = |constants| {
            let mut out = Vec::new();
            let config = UniqueAtoms {
                atoms_per_point: 2,
                constants,
                time_points: 2,
                start: 0,
                extra_every: 0,
            };
            unique_atoms(&config, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            text(Constants::Names),
            "p(id0,b0,0).\np(id1,b1,0).\np(id2,b2,1).\np(id3,b3,1).\n"
        );
        let iris = text(Constants::Iris);
        assert!(
            iris.starts_with(
                "p(\"http://example.org/stream/event#0\",\"http://example.org/stream/object#0\",0).\n"
            ),
            "{iris}"
        );
    }

    #[test]
    fn graph_lists_each_edge_once_per_point_and_changes_slowly() {
        let mut out = Vec::new();
        let config = Graph {
            nodes: 30,
            edges: 40,
            changes: 2,
            time_points: 20,
            start: 0,
            seed: 7,
        };
        graph(&config, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut points: Vec<std::collections::BTreeSet<(String, String)>> =
            vec![Default::default(); 20];
        for line in text.lines() {
            let inner = line.strip_prefix("e(").unwrap().strip_suffix(").").unwrap();
            let parts: Vec<&str> = inner.split(',').collect();
            let time: usize = parts[2].parse().unwrap();
            assert!(parts[0].starts_with('n') && parts[1].starts_with('n'));
            let fresh = points[time].insert((parts[0].to_owned(), parts[1].to_owned()));
            assert!(fresh, "{line} twice");
        }
        for pair in points.windows(2) {
            assert!(!pair[0].is_empty() && pair[0].len() <= 40);
            // At most `changes` edges leave and `changes` arrive per step.
            assert!(pair[0].difference(&pair[1]).count() <= 2);
            assert!(pair[1].difference(&pair[0]).count() <= 2);
        }
        let again = {
            let mut out = Vec::new();
            graph(&config, &mut out).unwrap();
            out
        };
        assert_eq!(again, text.as_bytes(), "same seed, same graph");
    }

    #[test]
    fn traffic_lights_start_red_twice_out_of_phase() {
        let mut out = Vec::new();
        let summary = traffic_lights(
            &TrafficLights {
                lights: 4,
                start: 5,
            },
            &mut out,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "red(l0,5).\nred(l3,5).\nred(l0,6).\nred(l1,6).\nred(l3,6).\nred(l1,7).\nred(l2,7).\nred(l2,8).\n"
        );
        assert_eq!(summary.facts, 8);
    }
}
