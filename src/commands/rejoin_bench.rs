//! `nic bench rejoin`: the rejoin protocol against the tuned heartbeat baselines
//! (nic_testbench::rejoin_bench), with a spinner counting the runs, the table or JSON,
//! and its charts with `--plot DIR`.

use super::bench::BenchOutput;

/// Options of `nic bench rejoin` (see nic_testbench::rejoin_bench).
#[derive(clap::Args, Debug, Clone)]
pub struct RejoinBenchArgs {
    /// Cluster sizes, comma separated (2..=64).
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16,32,64")]
    pub hosts: Vec<usize>,
    /// Seeds per size and mode in the report (min / median / max).
    #[arg(long, default_value_t = 3)]
    pub seeds: usize,
    /// Seeds every hold-down candidate of the baseline's search must pass.
    #[arg(long, default_value_t = 5)]
    pub search_seeds: usize,
    /// The first seed (the others follow).
    #[arg(long, default_value_t = 11)]
    pub seed: u64,
    /// Share of a link the baseline's heartbeats may take; sets the period per size.
    #[arg(long, default_value_t = 0.01)]
    pub budget: f64,
    /// The baseline's timeout in heartbeat periods.
    #[arg(long, default_value_t = 3)]
    pub timeout_periods: u64,
    /// A fixed heartbeat period instead of the budget's, cycles.
    #[arg(long)]
    pub period: Option<u64>,
    /// The hold-down search stops within this fraction of the smallest passing candidate.
    #[arg(long, default_value_t = 0.05)]
    pub precision: f64,
    /// Also run the reference hold-down (timeout + 2 periods + the retransmission span).
    #[arg(long)]
    pub reference: bool,
    /// Only the rejoin protocol's runs, no baseline search or baseline modes: the
    /// protocol's latency against the link limit (minutes at 64 hosts, not the search's
    /// hour). `nic measurements` should not be fed this run's JSON as the bench's.
    #[arg(long)]
    pub protocol_only: bool,
    /// Cycles the rebooting host stays off.
    #[arg(long, default_value_t = 500)]
    pub down_cycles: u64,
    /// Requests to the rebooting host sent this many cycles before its reboot are held in
    /// the fabric up to twice as long, so they reach its new boot (0: none).
    #[arg(long, default_value_t = 1000)]
    pub held_requests: u64,
    /// Offered load on the rebooting host: a fraction of its capacity (the words per cycle
    /// it takes of this mix), split evenly among the other hosts.
    #[arg(long, default_value_t = 0.9)]
    pub load: f64,
    /// The rebooting host's capacity in words per cycle (default: measured first, 15
    /// senders saturating it; 1.0 sizes the load to its link, which overloads the NIC).
    #[arg(long)]
    pub capacity: Option<f64>,
    /// Instead of --load: chance per cycle that each other host starts an operation.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Threads stepping the NICs.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    #[command(flatten)]
    pub output: BenchOutput,
}

/// `nic bench rejoin`: the protocol against the tuned heartbeat baselines per size.
pub fn run(args: &RejoinBenchArgs) -> Result<(), String> {
    use nic_testbench::rejoin_bench::{
        bench_rejoin, measure_capacity, render_text, RejoinBenchOptions, CAPACITY_HOSTS,
    };
    let mut o = RejoinBenchOptions {
        hosts: args.hosts.clone(),
        seeds: args.seeds,
        search_seeds: args.search_seeds,
        first_seed: args.seed,
        down_cycles: args.down_cycles,
        held_requests: args.held_requests,
        budget: args.budget,
        timeout_periods: args.timeout_periods,
        period: args.period,
        precision: args.precision,
        reference: args.reference,
        protocol_only: args.protocol_only,
        load: args.load,
        capacity: args.capacity,
        rate: args.rate,
        threads: args.threads,
    };
    o.check().map_err(|e| format!("nic bench rejoin: {e}"))?;
    // The number of runs depends on the hold-down searches: a spinner counting them.
    let bar = args.output.progress("nic bench rejoin", None);
    if o.rate.is_none() && o.capacity.is_none() {
        args.output.step(
            &bar,
            format!("measuring host 1's capacity ({CAPACITY_HOSTS} hosts saturating it)"),
        );
        o.capacity = Some(measure_capacity(&o)?);
    }
    let mut runs = 0u64;
    let results = bench_rejoin(&o, |what| {
        runs += 1;
        args.output.step(&bar, format!("run {runs}: {what}"));
    })?;
    bar.finish_and_clear();
    let table = || {
        let traffic = match (o.rate, o.capacity) {
            (Some(r), _) => {
                format!("each other host starts an operation with chance {r} per cycle")
            }
            (None, c) => format!(
                "offered load {:.2} of its capacity {:.3} words/cycle, split among the other hosts",
                o.load,
                c.unwrap_or(1.0)
            ),
        };
        format!(
            "nic bench rejoin: host 1 reboots ({} cycles off) under RDMA traffic from every other host ({traffic})\n{}",
            o.down_cycles,
            render_text(&results)
        )
    };
    args.output.finish("rejoin", &results, table, |dir| {
        nic_plots::bench::write_rejoin(&results, dir)
    })
}
