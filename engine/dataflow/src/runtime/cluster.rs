//! Where the workers run: threads of this process, or a cluster of processes whose
//! connections [`super::greeting`] makes.

use std::path::PathBuf;

use stgflow_io::drive::RunError;

use super::greeting::{ClusterKey, Fingerprint, Identity, connect};

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
    /// What every process must agree on: the others refuse a process that differs.
    pub fingerprint: Fingerprint,
    /// A secret every process must prove it holds (`--cluster-key-file`).
    pub key: Option<ClusterKey>,
}

impl Default for Cluster {
    fn default() -> Cluster {
        Cluster {
            workers: 1,
            processes: 1,
            process: 0,
            hostfile: None,
            connect_timeout: std::time::Duration::from_secs(30),
            fingerprint: Fingerprint::default(),
            key: None,
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

    /// How many of the cluster's processes run on this one's host (by the hostfile's host
    /// names; the default addresses are all the local host's): they share its cores.
    pub(super) fn processes_here(&self) -> usize {
        if self.processes <= 1 {
            return 1;
        }
        let Ok(addresses) = self.addresses() else {
            return 1;
        };
        let host = |address: &str| {
            address
                .rsplit_once(':')
                .map_or(address, |(h, _)| h)
                .to_owned()
        };
        let Some(here) = addresses.get(self.process).map(|a| host(a)) else {
            return 1;
        };
        addresses[..self.processes.min(addresses.len())]
            .iter()
            .filter(|a| host(a) == here)
            .count()
            .max(1)
    }

    /// Starts the workers of this process running `func`.
    pub(super) fn execute<F>(
        &self,
        func: F,
    ) -> Result<timely::communication::WorkerGuards<()>, RunError>
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
                worker: worker_config(),
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
        let identity = Identity {
            me: self.process,
            workers: threads,
            fingerprint: self.fingerprint,
            key: self.key.as_ref(),
        };
        let sockets = connect(
            &addresses[..self.processes],
            &identity,
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
        timely::execute::execute_from(builders, Box::new(guard), worker_config(), func)
            .map_err(RunError::Cluster)
    }
}

/// Timely's worker settings. An idle worker parks at once: by default timely polls its
/// channels for a while first, which burns a core each time a worker runs out of work,
/// the more so with more workers than cores.
fn worker_config() -> timely::WorkerConfig {
    timely::WorkerConfig::default().idle_spin(std::time::Duration::ZERO)
}
