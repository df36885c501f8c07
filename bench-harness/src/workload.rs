//! The workloads a sweep can run: a TD program (a function of the window size where the
//! workload has one) and a seeded stream (a function of the rate and the stream length),
//! both written to files so that every run reads them exactly as a user's `stgflow run`
//! would.
//!
//! | workload | program | stream (rate R, length L) |
//! |---|---|---|
//! | `diamond` | `q(A,B,T) :- p(A,B,T-i)` for i in 0..=w (LARS `⊞w ♢ p`) | R new unique atoms `p(N,N,T)` per time point |
//! | `box` | `q(A,B,T) :- p(A,B,T), …, p(A,B,T-w)` (LARS `⊞w □ p`) | the same |
//! | `inertia` | `datasets/examples/inertia.tdl` | R `init` events per time point over 100,000 fluents |
//! | `tick` | `seen(X,T) :- tick(X,T)` | one fact per time point (R ignored) |
//! | `device-safety` | `datasets/examples/device_safety.tdl` | R devices, repair and warning each at rate 0.05 |
//! | `lars-diamond` | `q(A,B) :- time_win(w,0,1,diamond(p(A,B)))` (Laser's syntax) | the unique atoms as a Laser stream file |
//! | `lars-box` | the same with `box` | the same |
//! | `lars-at` | `q(T,A,B) :- time_win(w,0,1,@(T,p(A,B)))` | the same |
//! | `lars-diamond-not` | `q(A,B) :- time_win(w,0,1,diamond(p(A,B))) and not(s)` | the same, plus `s` every 5th time point |
//! | `caviar` | RTEC's `caviar/rtec/rules.prolog`, `list-of-ids.prolog` and `datasets/ec/caviar_distance.ec` (`--tick 40`) | RTEC's CAVIAR data, in full (R and L ignored) |
//! | `ctm` | RTEC's `ctm/rtec/rules.prolog` and `vehicles.prolog` | RTEC's city-transport data, in full |
//! | `voting` | RTEC's `voting/rtec/rules.prolog` and `voting_static_generator.prolog` | RTEC's voting data, in full |
//! | `netbill` | RTEC's `netbill/rtec/rules.prolog` and `netbill_static_generator.prolog` | `netbill/endL.csv`: RTEC's generator's narrative up to time L (`scripts/peers/netbill_data.sh` writes both) |
//!
//! The recorded workloads read RTEC's public data and RTEC's own event descriptions from
//! a data directory (`--data`, by default `../shared/data/rtec`; the descriptions in each
//! application's `rtec/`); their input-fact count is the number of records. RTEC ships
//! no NetBill data, and its generator runs under SWI-Prolog, so NetBill's directory is
//! made by a script beside RTEC's checkout, one narrative per length.
//!
//! Pitfall: the input-fact count of a stream is what the generator wrote; `device-safety`
//! and `inertia` write fewer than R facts per time point (coin flips, one event per fluent
//! and time point), so their facts/s figures use the real count, never R × L.

use std::fmt;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::Context;
use stgflow_datasets::convert::{ConvertError, ConvertingWriter, Format};
use stgflow_datasets::{
    DeviceFleet, Inertia, OnePerPoint, Summary, UniqueAtoms, device_fleet, examples, inertia,
    one_per_point, unique_atoms,
};

/// A named benchmark workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    Diamond,
    Box,
    Inertia,
    Tick,
    DeviceSafety,
    LarsDiamond,
    LarsBox,
    LarsAt,
    LarsDiamondNot,
    Caviar,
    Ctm,
    Voting,
    /// RTEC's NetBill, over narratives of RTEC's own generator: one per length.
    Netbill,
    /// The user's own program and streams (`sweep --program FILE --stream FILE`).
    Own,
}

/// A recorded workload: RTEC's event description and RTEC data files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// RTEC's event description and background knowledge, in the data's `dir/rtec/`, the
    /// rules first.
    pub description: &'static [&'static str],
    /// A file of the repository's given after them, by name and text: what RTEC computes
    /// in Prolog before its queries (CAVIAR's distances).
    pub own: Option<(&'static str, &'static str)>,
    /// The data's directory under the data directory, and its files.
    pub dir: &'static str,
    pub files: &'static [&'static str],
    /// Extra `stgflow run` arguments.
    pub args: &'static [&'static str],
}

impl Recorded {
    /// The program file (RTEC's rules) and the files given before the streams, under the
    /// data directory `data`; the repository's own file is written into `written`.
    pub fn program_files(
        &self,
        data: &Path,
        written: &Path,
    ) -> std::io::Result<(PathBuf, Vec<PathBuf>)> {
        let rtec = data.join(self.dir).join("rtec");
        let mut more: Vec<PathBuf> = self.description[1..].iter().map(|f| rtec.join(f)).collect();
        if let Some((name, text)) = self.own {
            let path = written.join(name);
            std::fs::write(&path, text)?;
            more.push(path);
        }
        Ok((rtec.join(self.description[0]), more))
    }
}

impl Workload {
    pub const ALL: [Workload; 14] = [
        Workload::Diamond,
        Workload::Box,
        Workload::Inertia,
        Workload::Tick,
        Workload::DeviceSafety,
        Workload::LarsDiamond,
        Workload::LarsBox,
        Workload::LarsAt,
        Workload::LarsDiamondNot,
        Workload::Caviar,
        Workload::Ctm,
        Workload::Voting,
        Workload::Netbill,
        Workload::Own,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Workload::Diamond => "diamond",
            Workload::Box => "box",
            Workload::Inertia => "inertia",
            Workload::Tick => "tick",
            Workload::DeviceSafety => "device-safety",
            Workload::LarsDiamond => "lars-diamond",
            Workload::LarsBox => "lars-box",
            Workload::LarsAt => "lars-at",
            Workload::LarsDiamondNot => "lars-diamond-not",
            Workload::Caviar => "caviar",
            Workload::Ctm => "ctm",
            Workload::Voting => "voting",
            Workload::Netbill => "netbill",
            Workload::Own => "own",
        }
    }

    /// How reports and legends name the workload: one's own by its program's file name
    /// (`program`), where known.
    pub fn display_name(self, program: Option<&str>) -> String {
        match (self, program) {
            (Workload::Own, Some(program)) => program.to_owned(),
            _ => self.name().to_owned(),
        }
    }

    /// The event description and data of a recorded workload.
    pub fn recorded(self) -> Option<Recorded> {
        match self {
            Workload::Caviar => Some(Recorded {
                description: &["rules.prolog", "list-of-ids.prolog"],
                own: Some((
                    "caviar_distance.ec",
                    include_str!("../../datasets/ec/caviar_distance.ec"),
                )),
                dir: "caviar",
                files: &["appearance.csv", "movementB.csv"],
                args: &["--tick", "40"],
            }),
            Workload::Ctm => Some(Recorded {
                description: &["rules.prolog", "vehicles.prolog"],
                own: None,
                dir: "ctm",
                files: &[
                    "abrupt_acceleration.csv",
                    "abrupt_deceleration.csv",
                    "internal_temperature_change.csv",
                    "noise_level_change.csv",
                    "passenger_density_change.csv",
                    "sharp_turn.csv",
                    "stop_enter_leave.csv",
                ],
                args: &[],
            }),
            Workload::Voting => Some(Recorded {
                description: &["rules.prolog", "voting_static_generator.prolog"],
                own: None,
                dir: "voting",
                files: &["voting.csv"],
                args: &[],
            }),
            Workload::Netbill => Some(Recorded {
                description: &["rules.prolog", "netbill_static_generator.prolog"],
                own: None,
                dir: "netbill",
                files: &[],
                args: &[],
            }),
            _ => None,
        }
    }

    /// Whether the program depends on the window size.
    pub fn has_window(self) -> bool {
        matches!(self, Workload::Diamond | Workload::Box) || self.is_lars()
    }

    /// Whether the program is plain LARS in Laser's syntax (over a Laser stream file).
    pub fn is_lars(self) -> bool {
        matches!(
            self,
            Workload::LarsDiamond | Workload::LarsBox | Workload::LarsAt | Workload::LarsDiamondNot
        )
    }

    /// The program's file name: its extension selects the front end.
    pub fn program_file(self, window: u64) -> String {
        match self.recorded() {
            Some(recorded) => recorded.description[0].to_owned(),
            None if self.is_lars() => format!("{self}_w{window}.lars"),
            None if self.has_window() => format!("{self}_w{window}.tdl"),
            None => format!("{self}.tdl"),
        }
    }

    /// Whether the stream depends on the rate.
    pub fn has_rate(self) -> bool {
        !matches!(self, Workload::Tick | Workload::Own) && self.recorded().is_none()
    }

    /// Whether the stream depends on the length (NetBill's: a narrative per length).
    pub fn has_length(self) -> bool {
        (self.recorded().is_none() && self != Workload::Own) || self == Workload::Netbill
    }

    /// A recorded workload's data files for `length`, under its directory.
    pub fn recorded_files(self, recorded: &Recorded, length: u64) -> Vec<String> {
        match self {
            Workload::Netbill => vec![format!("end{length}.csv")],
            _ => recorded.files.iter().map(|f| (*f).to_owned()).collect(),
        }
    }

    /// The program's text for window size `window` (ignored without a window).
    pub fn program(self, window: u64) -> String {
        match self {
            Workload::Diamond => {
                let mut text = format!("% LARS ⊞{window} ♢ p, written out by Algorithm 2\n");
                for i in 0..=window {
                    text.push_str(&format!("q(A, B, T) :- p(A, B, T-{i}).\n"));
                }
                text
            }
            Workload::Box => {
                let body: Vec<String> = (0..=window).map(|i| format!("p(A, B, T-{i})")).collect();
                format!(
                    "% LARS ⊞{window} □ p, written out by Algorithm 2\nq(A, B, T) :- {}.\n",
                    body.join(", ")
                )
            }
            Workload::Inertia => examples::INERTIA_TDL.to_owned(),
            Workload::LarsDiamond => format!("q(A,B) :- time_win({window},0,1,diamond(p(A,B)))\n"),
            Workload::LarsBox => format!("q(A,B) :- time_win({window},0,1,box(p(A,B)))\n"),
            Workload::LarsAt => format!("q(T,A,B) :- time_win({window},0,1,@(T,p(A,B)))\n"),
            Workload::LarsDiamondNot => {
                format!("q(A,B) :- time_win({window},0,1,diamond(p(A,B))) and not(s)\n")
            }
            Workload::Tick => "seen(X, T) :- tick(X, T).\n".to_owned(),
            Workload::DeviceSafety => examples::DEVICE_SAFETY_TDL.to_owned(),
            // RTEC's files and the user's own, not written out.
            Workload::Caviar
            | Workload::Ctm
            | Workload::Voting
            | Workload::Netbill
            | Workload::Own => String::new(),
        }
    }

    /// Writes the stream for `rate` and `length` time points to `path` (generated
    /// workloads only).
    pub fn write_stream(self, rate: u64, length: u64, path: &Path) -> anyhow::Result<Summary> {
        if self.recorded().is_some() || self == Workload::Own {
            anyhow::bail!("{self} reads recorded data; it has no generated stream");
        }
        let file =
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        let out = BufWriter::with_capacity(1 << 20, file);
        if self.is_lars() {
            // Laser's stream file: the same unique atoms, converted as they are written.
            let timeline = length.checked_sub(1).map(|last| (0, last));
            let convert = |e: ConvertError| anyhow::anyhow!("writing {}: {e}", path.display());
            let mut writer =
                ConvertingWriter::new(Format::Laser, out, timeline).map_err(convert)?;
            let config = UniqueAtoms {
                atoms_per_point: rate,
                constants: stgflow_datasets::Constants::Integers,
                time_points: length,
                start: 0,
                extra_every: if self == Workload::LarsDiamondNot {
                    5
                } else {
                    0
                },
            };
            let summary = unique_atoms(&config, &mut writer)
                .with_context(|| format!("writing {}", path.display()))?;
            writer.finish().map_err(convert)?;
            return Ok(summary);
        }
        let summary = match self {
            Workload::Diamond | Workload::Box => unique_atoms(
                &UniqueAtoms {
                    atoms_per_point: rate,
                    constants: stgflow_datasets::Constants::Integers,
                    time_points: length,
                    start: 0,
                    extra_every: 0,
                },
                out,
            ),
            Workload::Inertia => inertia(
                &Inertia {
                    fluents: 100_000,
                    values: 3,
                    events_per_point: rate,
                    time_points: length,
                    start: 0,
                    seed: 1,
                },
                out,
            ),
            Workload::Tick => one_per_point(
                &OnePerPoint {
                    time_points: length,
                    start: 0,
                },
                out,
            ),
            Workload::DeviceSafety => device_fleet(
                &DeviceFleet {
                    devices: rate,
                    time_points: length,
                    start: 0,
                    repair_rate: 0.05,
                    warning_rate: 0.05,
                    seed: 1,
                },
                out,
            ),
            // Turned away or written above.
            Workload::LarsDiamond
            | Workload::LarsBox
            | Workload::LarsAt
            | Workload::LarsDiamondNot
            | Workload::Caviar
            | Workload::Ctm
            | Workload::Voting
            | Workload::Netbill
            | Workload::Own => return Ok(Summary::default()),
        };
        summary.with_context(|| format!("writing {}", path.display()))
    }

    /// The stream's file name in a cache directory: one file per (stream kind, rate, length).
    pub fn stream_path(self, dir: &Path, rate: u64, length: u64) -> PathBuf {
        let kind = match self {
            Workload::Diamond | Workload::Box => "unique-atoms",
            Workload::LarsDiamond | Workload::LarsBox | Workload::LarsAt => "unique-atoms",
            Workload::LarsDiamondNot => "unique-atoms-s5",
            other => other.name(),
        };
        let rate = if self.has_rate() { rate } else { 1 };
        let extension = if self.is_lars() { "laser" } else { "facts" };
        dir.join(format!("{kind}_r{rate}_l{length}.{extension}"))
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Workload {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
                format!(
                    "unknown workload `{s}` (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use stgflow_lang::compile_str;

    #[test]
    fn every_program_compiles_for_windows_0_1_and_100() {
        for workload in Workload::ALL
            .into_iter()
            .filter(|w| w.recorded().is_none() && !w.is_lars())
        {
            for window in [0, 1, 100] {
                let text = workload.program(window);
                let compiled = compile_str(workload.name(), &text);
                assert!(
                    !compiled.has_errors(),
                    "{workload} w={window}:\n{}",
                    compiled.render_diagnostics(false)
                );
            }
        }
    }

    #[test]
    fn recorded_descriptions_compile_and_name_their_data() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/rtec");
        let written =
            std::env::temp_dir().join(format!("stgflow-workload-recorded-{}", std::process::id()));
        std::fs::create_dir_all(&written).unwrap();
        for workload in [Workload::Caviar, Workload::Ctm, Workload::Voting] {
            let recorded = workload.recorded().unwrap();
            assert!(!recorded.files.is_empty() && !workload.has_rate() && !workload.has_length());
            assert_eq!(workload.program_file(0), "rules.prolog");
            if !data.is_dir() {
                continue;
            }
            let (program, more) = recorded.program_files(&data, &written).unwrap();
            let texts: Vec<(String, String)> = std::iter::once(&program)
                .chain(&more)
                .map(|p| (p.display().to_string(), std::fs::read_to_string(p).unwrap()))
                .collect();
            let files: Vec<(&str, &str)> = texts
                .iter()
                .map(|(n, t)| (n.as_str(), t.as_str()))
                .collect();
            let ec = stgflow_ec::compile_files(&files);
            assert!(
                !ec.compiled.has_errors(),
                "{workload}: {}",
                ec.compiled.render_diagnostics(false)
            );
            for file in recorded.files {
                assert!(
                    data.join(recorded.dir).join(file).is_file(),
                    "{workload}: {file}"
                );
            }
        }
        std::fs::remove_dir_all(&written).unwrap();
        assert!(
            Workload::Caviar
                .write_stream(1, 1, std::path::Path::new("/nonexistent"))
                .is_err()
        );
    }

    #[test]
    fn lars_programs_compile_and_their_streams_are_laser_files() {
        for workload in Workload::ALL.into_iter().filter(|w| w.is_lars()) {
            for window in [1, 100] {
                let compiled = stgflow_lars::compile_str("w.lars", &workload.program(window));
                assert!(
                    !compiled.has_errors(),
                    "{workload} w={window}:\n{}",
                    compiled.render_diagnostics(false)
                );
            }
            assert!(workload.program_file(3).ends_with("_w3.lars"));
        }
        let dir = std::env::temp_dir().join(format!("stgflow-workload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = Workload::LarsDiamondNot.stream_path(&dir, 2, 6);
        let summary = Workload::LarsDiamondNot.write_stream(2, 6, &path).unwrap();
        assert_eq!(summary.facts, 12 + 2);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "#timeline 0 5\n0: p(0,0) p(1,1) s\n1: p(2,2) p(3,3)\n2: p(4,4) p(5,5)\n3: p(6,6) p(7,7)\n4: p(8,8) p(9,9)\n5: p(10,10) p(11,11) s\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn diamond_and_box_have_window_plus_one_offsets() {
        let diamond = compile_str("d", &Workload::Diamond.program(3));
        assert_eq!(diamond.program.rules.len(), 4);
        let boxed = compile_str("b", &Workload::Box.program(3));
        assert_eq!(boxed.program.rules.len(), 1);
        assert_eq!(boxed.program.rules[0].body.len(), 4);
    }

    #[test]
    fn names_round_trip_and_unknown_names_are_listed() {
        for workload in Workload::ALL {
            assert_eq!(workload.name().parse::<Workload>().unwrap(), workload);
        }
        let error = "triangle".parse::<Workload>().unwrap_err();
        assert!(error.contains("diamond, box"), "{error}");
    }
}
