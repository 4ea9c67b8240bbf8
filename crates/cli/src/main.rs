//! `stormsim`: run resilience models, compare their variants, draw them.

mod attempts_file;
mod bench;
mod charts;
mod import_cmd;
mod margin_cmd;
mod outdir;
mod output;
mod plot_cmd;
mod probability_cmd;
mod report_html;
mod sweep_charts;
mod sweep_cmd;
mod sweep_page;
mod table;
mod view;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use stormsim_model::{
    load_model, load_model_in, parse_cli_value, LoadedModel, ModelError, Problem,
};
use stormsim_plot::style::format_counted;
use stormsim_sim::analysis::Outcome;
use stormsim_sim::memory::check_memory;
use stormsim_sweep::MAX_JOBS;

/// Exit code for input the user must fix: a model or sweep file (bad JSON, an
/// unknown field, a file that is not there), a flag's value, a folder (one
/// that holds someone else's files, or that another stormsim is writing).
const EXIT_BAD_INPUT: u8 = 2;

/// Exit code of a `run` or `sweep` that wrote its outputs but where a run
/// stopped at one of the model's `limits`: its numbers describe a cut-short
/// run (`--accept-partial` makes it 0).
const EXIT_PARTIAL: u8 = 3;

/// Exit code of a `run` or `sweep` that wrote its outputs and in which a
/// variant or run was judged one of the outcomes `--fail-on` names: a gate
/// for a CI job. It wins over [`EXIT_PARTIAL`].
const EXIT_VERDICT: u8 = 4;

/// What the exit codes mean, for every command's help.
const EXIT_CODES: &str = "Exit codes: 0 done; 1 a failure to read or write files; \
    2 input to fix (a model, a sweep file, a flag, an output folder holding \
    someone else's files or locked by another stormsim); 3 (run, sweep) the \
    outputs are written but a run stopped at one of the model's `limits`, so \
    its numbers describe a cut-short run (pass --accept-partial for 0); \
    4 (run, sweep) the outputs are written and a variant or run was judged an \
    outcome --fail-on names (one line per failing one on stderr).";

#[derive(Parser)]
#[command(
    name = "stormsim",
    version,
    about = "A deterministic discrete-event simulator for resilience engineering",
    long_about = "Models clients, services, queues and call edges with their timeouts, \
                  retries and deadlines on a virtual clock, so that what happens to a \
                  system under a policy can be seen in seconds, and compared.",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `--no-warnings[=NAME,...]`, on every command that loads a model.
#[derive(clap::Args, Clone, Debug, Default)]
struct WarningsArgs {
    /// Silence the model's warnings (values that are valid but almost
    /// certainly not meant; they never change the exit code): all of them,
    /// or with =NAME,... only those named (hedge-never-fires,
    /// envoy-budget-percent, timeout-below-round-trip,
    /// trigger-without-metastability, rate-limit-never-binds,
    /// horizon-before-timeline, uncapped-backoff-without-horizon,
    /// arrivals-outlast-series-limit, arrivals-outnumber-max-events,
    /// set-undone-by-ramp). Repeatable.
    #[arg(
        long = "no-warnings",
        value_name = "NAME",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "all",
        value_delimiter = ',',
        action = clap::ArgAction::Append,
        value_parser = parse_warning_name
    )]
    no_warnings: Vec<String>,
}

impl WarningsArgs {
    /// Whether the warning `name` is silenced.
    fn silences(&self, name: &str) -> bool {
        self.no_warnings.iter().any(|n| n == "all" || n == name)
    }
}

/// `--fail-on OUTCOME,...`, on `run` and `sweep`: a verdict a CI job can
/// gate on.
#[derive(clap::Args, Clone, Debug, Default)]
struct FailOnArgs {
    /// Exit 4 when a variant (a sweep: a run) is judged one of these
    /// recovery outcomes, comma-separated: recovered, relapsed, metastable,
    /// overloaded, unhealthy_before_trigger, undetermined. Each failing one
    /// gets a line on stderr: `FAIL model/variant: outcome: reason`. Typical:
    /// --fail-on metastable,relapsed. Exit 4 wins over 3 (a run stopped at a
    /// limit), which --accept-partial still turns to 0.
    #[arg(
        long = "fail-on",
        value_name = "OUTCOME,...",
        value_delimiter = ',',
        value_parser = parse_outcome
    )]
    fail_on: Vec<Outcome>,
}

impl FailOnArgs {
    /// What a FAIL line says of a variant with `verdict` (its outcome and
    /// reason), if it fails: an outcome to fail on, or no verdict at all
    /// where one was asked for (a gate that cannot judge does not pass).
    fn failing(&self, verdict: Option<&(Outcome, String)>) -> Option<String> {
        if self.fail_on.is_empty() {
            return None;
        }
        match verdict {
            None => Some(sweep_cmd::verdict_text(None, "")),
            Some((outcome, reason)) if self.fail_on.contains(outcome) => {
                Some(sweep_cmd::verdict_text(Some(*outcome), reason))
            }
            Some(_) => None,
        }
    }

    /// The exit code once `failing` of the `what` (variants, runs) were
    /// judged an outcome to fail on: 4 and a line saying how many, or
    /// `otherwise`.
    fn exit(&self, failing: usize, what: &str, otherwise: ExitCode) -> ExitCode {
        if failing == 0 {
            return otherwise;
        }
        let names: Vec<&str> = self.fail_on.iter().map(|o| o.as_str()).collect();
        let what = if failing == 1 {
            what.trim_end_matches('s')
        } else {
            what
        };
        eprintln!(
            "error: {failing} {what} judged {} or without a verdict (--fail-on; exit code {EXIT_VERDICT})",
            names.join(" or ")
        );
        ExitCode::from(EXIT_VERDICT)
    }
}

/// An outcome `--fail-on` takes.
fn parse_outcome(text: &str) -> std::result::Result<Outcome, String> {
    Outcome::parse(text.trim()).ok_or_else(|| {
        let names: Vec<&str> = Outcome::ALL.iter().map(|o| o.as_str()).collect();
        format!("no outcome {text:?}; the outcomes are {}", names.join(", "))
    })
}

/// A name `--no-warnings=` takes: a warning's, or `all`.
fn parse_warning_name(text: &str) -> std::result::Result<String, String> {
    let text = text.trim();
    if text == "all" || stormsim_model::WARNINGS.iter().any(|(n, _)| *n == text) {
        Ok(text.to_string())
    } else {
        Err(format!(
            "no warning is named {text:?}: the warnings are {}",
            stormsim_model::WARNINGS
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// Prints the warnings of `loaded`, the model of `file`, that `silenced`
/// leaves, to stderr: `FILE: warning[NAME]: PATH: MESSAGE` (`within`, if not
/// empty, before the path: an inline model's `model`). Warnings never change
/// an exit code: the model runs as written.
fn print_warnings(file: &Path, within: &str, loaded: &LoadedModel, silenced: &WarningsArgs) {
    for w in stormsim_model::warnings(loaded) {
        if !silenced.silences(w.name) {
            print_warning(file, within, &w, "");
        }
    }
}

/// `FILE: warning[NAME]: [WITHIN: ]PATH: MESSAGE[AFTER]`, to stderr.
fn print_warning(file: &Path, within: &str, w: &stormsim_model::Warning, after: &str) {
    let path = if within.is_empty() {
        w.path.clone()
    } else {
        format!("{within}: {}", w.path)
    };
    eprintln!(
        "{}: warning[{}]: {path}: {}{after}",
        file.display(),
        w.name,
        w.message
    );
}

/// The warnings of a sweep's models: of every point's model, as checked
/// (its axes move values the warnings may be about), each once, with how
/// many points have it when not all do; for a search, which has no points,
/// of the model as written.
fn print_sweep_warnings(sweep: &stormsim_sweep::Sweep, silenced: &WarningsArgs) {
    if silenced.silences("all") {
        return;
    }
    let within = match sweep.spec.model {
        stormsim_sweep::ModelSource::Inline(_) => "model",
        stormsim_sweep::ModelSource::File(_) => "",
    };
    if sweep.points.is_empty() {
        // The model loaded when the sweep did: this cannot fail.
        if let Ok(loaded) = load_model(&sweep.model_text, &[], None) {
            print_warnings(&sweep.model_path, within, &loaded, silenced);
        }
        return;
    }
    let all = sweep.points.len();
    for found in &sweep.warnings {
        if silenced.silences(found.warning.name) {
            continue;
        }
        let at = if found.points < all {
            format!(
                " (at {} of the {all} points; the first, point {})",
                found.points, found.first_point
            )
        } else {
            String::new()
        };
        print_warning(&sweep.model_path, within, &found.warning, &at);
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run every variant of a model; print a comparison; write summary.json,
    /// summary.csv and charts.
    ///
    /// The outputs are written into a new folder beside the output folder
    /// (.stormsim-tmp-<name>-XXXXXX) and swapped into its place at the end:
    /// an interrupted run leaves the last run's outputs whole, and the next
    /// run removes what it left. The folder's .stormsim-manifest.json lists
    /// the files stormsim wrote: only those are ever replaced or removed.
    #[command(after_help = EXIT_CODES)]
    Run {
        /// The model file(s) (JSON). Several run one after another, each into
        /// outputs/<its name>/ (sweep files among them are skipped, named).
        /// Two models with the same `name` are refused (exit 2): they would
        /// share a folder; run them one at a time with --out.
        #[arg(required = true)]
        models: Vec<PathBuf>,
        /// Output folder (with one model). Default: outputs/<model name>/
        #[arg(long)]
        out: Option<PathBuf>,
        /// Master seed (overrides the model's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Override a parameter in every variant: PATH=VALUE, VALUE as JSON or a bare string.
        /// Repeatable. Example: --set 'services[A].steps[B].timeout_ms=300'
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// Only these variants (repeatable; with one model). Default: all.
        #[arg(long = "variant", value_name = "NAME")]
        variants: Vec<String>,
        /// Print nothing but errors (and the comparison, if --format or
        /// --columns asks for it).
        #[arg(long, short)]
        quiet: bool,
        /// How to print the comparison: `table` (aligned, at most about 120
        /// columns wide), `markdown` (a GitHub table), `csv` (with a header)
        /// or `json` (an array of objects). With csv and json, stdout holds
        /// the data alone (progress and the files written go to stderr);
        /// they take one model.
        #[arg(long, value_enum, value_name = "FORMAT")]
        format: Option<table::Format>,
        /// The comparison's columns, by summary.csv's names, comma-separated:
        /// e.g. `variant,success_rate,latency_p99_ms,db.wasted`; `S.C` for
        /// service S's column C (`S.calls_per_request`, `S.wasted`,
        /// `S.cancelled`, ...); shorthands success, p50, p90, p99, p999,
        /// max, mean, verdict, and `focus.C` for the focus service's. Default:
        /// variant, success, p50, p99, the verdict (with a `metastability`
        /// block), and peak load, wasted work and calls per request at the
        /// focus service. An unknown name is refused, listing the others.
        #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
        columns: Vec<String>,
        /// Also write attempts.csv: one row per attempt on the wire (request,
        /// service, shard, replica, try, hedge, times, outcome), streamed to
        /// disk as the variants run: the file grows with the attempts
        /// simulated, memory does not.
        #[arg(long)]
        attempts: bool,
        /// Write into an output folder that holds something else than this
        /// model's earlier outputs: stormsim's files there (another model's
        /// outputs) are replaced; anything else stays. A file of yours at a
        /// name the run writes is never replaced: that is refused.
        #[arg(long)]
        force: bool,
        /// Exit 0, not 3, when a variant stopped at one of the model's limits.
        #[arg(long)]
        accept_partial: bool,
        #[command(flatten)]
        fail_on: FailOnArgs,
        /// The ceiling on the memory a run is estimated to need, in GiB
        /// (the model's instances, call edges, policy windows, cache keys,
        /// time series): a model over it is refused, naming its largest part.
        #[arg(long = "memory-limit-gb", value_name = "GIB", default_value = DEFAULT_MEMORY_LIMIT_GB, value_parser = parse_memory_limit)]
        memory_limit: u64,
        #[command(flatten)]
        warnings: WarningsArgs,
    },
    /// Run a sweep file: a model at many points of its parameter space, each
    /// replicated; write results.csv and aggregate.csv.
    ///
    /// The folder also gets sweep-inputs.json (hashes of the model and of the
    /// sweep's parts): --resume and merge refuse results computed from other
    /// inputs, saying what changed. One sweep at a time writes into a folder
    /// (a lock on it). A sweep has at most 1,000,000 points and 10,000,000
    /// runs.
    #[command(after_help = EXIT_CODES)]
    Sweep {
        /// The sweep file (JSON).
        sweep: PathBuf,
        /// Output folder. Default: outputs/<sweep name>/
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads, 1 to 256 (default: all cores). Results do not
        /// depend on it.
        #[arg(long, value_parser = parse_jobs)]
        jobs: Option<u16>,
        /// Continue an interrupted sweep from its results.csv.partial instead of
        /// starting afresh; the result is the same bytes.
        #[arg(long)]
        resume: bool,
        /// Stop after this many more runs (run a long sweep in pieces with --resume).
        #[arg(long)]
        max_runs: Option<usize>,
        /// Run only the I-th of N slices of the runs (I from 0), into its own
        /// --out; `auto/N` takes I from SLURM_ARRAY_TASK_ID or
        /// JOB_COMPLETION_INDEX. Combine with `stormsim merge`.
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        /// Start over in a folder that holds an interrupted run of a sweep
        /// (instead of --resume), or another sweep's results. A file of yours
        /// at a name the sweep writes is never replaced: that is refused.
        #[arg(long)]
        force: bool,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
        /// Exit 0, not 3, when a run stopped at one of the model's limits.
        #[arg(long)]
        accept_partial: bool,
        #[command(flatten)]
        fail_on: FailOnArgs,
        /// The ceiling on the memory each run is estimated to need, in GiB
        /// (as for `run`): a point over it is refused, naming its axis value.
        #[arg(long = "memory-limit-gb", value_name = "GIB", default_value = DEFAULT_MEMORY_LIMIT_GB, value_parser = parse_memory_limit)]
        memory_limit: u64,
        #[command(flatten)]
        warnings: WarningsArgs,
    },
    /// Merge the results of a sweep's shards into its tables: the same bytes as
    /// an unsharded run.
    Merge {
        /// The sweep file the shards ran.
        sweep: PathBuf,
        /// The shards' output folders.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        /// Output folder. Default: outputs/<sweep name>/
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Find a tipping point: bisect the sweep file's `search` parameter for where
    /// a metric's replication mean crosses a threshold; write search.csv.
    Search {
        /// The sweep file (JSON) with a `search` block.
        sweep: PathBuf,
        /// Output folder. Default: outputs/<sweep name>/
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads for a probe's replications, 1 to 256 (default: all
        /// cores).
        #[arg(long, value_parser = parse_jobs)]
        jobs: Option<u16>,
        /// Print nothing but errors and the result.
        #[arg(long, short)]
        quiet: bool,
        /// The ceiling on the memory each run is estimated to need, in GiB
        /// (as for `run`): a point over it is refused, naming its axis value.
        #[arg(long = "memory-limit-gb", value_name = "GIB", default_value = DEFAULT_MEMORY_LIMIT_GB, value_parser = parse_memory_limit)]
        memory_limit: u64,
        #[command(flatten)]
        warnings: WarningsArgs,
    },
    /// How close to the edge: at each load, the trigger size (its duration,
    /// or any path) at which half the runs storm, per variant, with its
    /// interval; write margin.csv, margin_probes.csv and margin.svg.
    Margin {
        /// A sweep file with a `margin` block, or a model file (then the
        /// flags below say what to search).
        file: PathBuf,
        /// Output folder. Default: outputs/<sweep name>/ (for a model file,
        /// outputs/<model name>-margin/).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        flags: margin_cmd::MarginFlags,
        /// Worker threads for a probe's replications, 1 to 256 (default: all
        /// cores).
        #[arg(long, value_parser = parse_jobs)]
        jobs: Option<u16>,
        /// Print nothing but errors and the result.
        #[arg(long, short)]
        quiet: bool,
        /// The ceiling on the memory each run is estimated to need, in GiB.
        #[arg(long = "memory-limit-gb", value_name = "GIB", default_value = DEFAULT_MEMORY_LIMIT_GB, value_parser = parse_memory_limit)]
        memory_limit: u64,
    },
    /// The probability of a storm per variant, with its 95% interval: plain
    /// Monte Carlo (Wilson's interval), or multilevel splitting for storms
    /// too rare for it (--splitting). Prints one line per variant, or with
    /// --csv the table (it writes no file).
    Probability {
        /// The model file.
        model: PathBuf,
        /// The variants (repeatable). Default: the first.
        #[arg(long = "variant", value_name = "NAME")]
        variants: Vec<String>,
        /// Runs per variant (Monte Carlo).
        #[arg(long, default_value_t = 400)]
        runs: u32,
        /// Estimate by multilevel splitting instead.
        #[arg(long)]
        splitting: bool,
        /// Splitting: runs per stage.
        #[arg(long = "runs-per-stage", default_value_t = 100)]
        runs_per_stage: u32,
        /// Splitting: independent repetitions, for the interval (at least 2).
        #[arg(long, default_value_t = 4)]
        repetitions: u32,
        /// The first seed (default: the model's); run r has seed + r.
        #[arg(long)]
        seed: Option<u64>,
        /// Overrides, as for `run`.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// Print the table as CSV instead of sentences.
        #[arg(long)]
        csv: bool,
        /// Worker threads, 1 to 256 (default: all cores).
        #[arg(long, value_parser = parse_jobs)]
        jobs: Option<u16>,
    },
    /// Measure the simulator's speed on a model, one variant after another on one
    /// thread: events/s, requests/s, attempts/s, peak memory and memory per
    /// request in flight.
    Bench {
        /// The model file. Default: the Catalog incident at full scale.
        #[arg(default_value = "models/catalog-incident.json")]
        model: PathBuf,
        /// Only these variants (repeatable). Default: the first one.
        #[arg(long = "variant", value_name = "NAME")]
        variants: Vec<String>,
        /// Run every variant.
        #[arg(long)]
        all: bool,
        /// Instead of a model, the engine alone: the hold model at 10^3, 10^5
        /// and 10^6 pending events.
        #[arg(long)]
        hold: bool,
        /// Overrides, as for `run`.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// Run every variant on the general engine, even those that may take
        /// the fast path (to compare the two).
        #[arg(long)]
        general: bool,
    },
    /// Check the simulator against queueing theory: run the textbook queues of
    /// models/validation/ with replications, print each quantity against its
    /// closed form, write validation.csv; exit 1 if a row fails.
    Validate {
        /// Runs per variant, each with its own seed (at least 2).
        #[arg(long, default_value_t = stormsim_validate::DEFAULT_REPLICATIONS)]
        replications: u32,
        /// Output folder for validation.csv.
        #[arg(long, default_value = "outputs/validation")]
        out: PathBuf,
        /// The folder of validation models (every *.json in it).
        #[arg(long, default_value = "models/validation")]
        models: PathBuf,
        /// Multiply every arrival window by this: below 1 for a quicker check
        /// with wider intervals (a run too short for its warm-up is refused).
        #[arg(long, default_value_t = 1.0)]
        duration_scale: f64,
    },
    /// Draw the charts (and index.html) of a run or a sweep again from the files
    /// in its folder, without simulating: the same bytes `run` or `sweep` wrote.
    Plot {
        /// The run's or the sweep's output folder.
        dir: PathBuf,
    },
    /// Import resilience settings from configuration files (Envoy, Istio,
    /// resilience4j, gRPC) as model fragments or a skeleton, or a whole model
    /// from traces (OTLP JSON, Jaeger JSON). What does not map is listed as a
    /// warning, never dropped silently; see docs/import.md.
    #[command(after_help = EXIT_CODES)]
    Import {
        /// What the files are.
        #[arg(value_enum)]
        source: import_cmd::ImportSource,
        /// The files to read (several are read as one input).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Write the model JSON here instead of to stdout.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Replace --out if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Check a model, or a sweep file (its model at every point and at its
    /// search's ends), without running it: every problem, with its JSON path.
    Check {
        /// The model file or the sweep file (JSON). A sweep file is one named
        /// *.sweep.json, or one with a `model` field.
        model: PathBuf,
        /// Overrides, as for `run` (models only).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// The ceiling on the memory a run is estimated to need, in GiB
        /// (the model's instances, call edges, policy windows, cache keys,
        /// time series): a model over it is refused, naming its largest part.
        #[arg(long = "memory-limit-gb", value_name = "GIB", default_value = DEFAULT_MEMORY_LIMIT_GB, value_parser = parse_memory_limit)]
        memory_limit: u64,
        #[command(flatten)]
        warnings: WarningsArgs,
    },
}

fn main() -> ExitCode {
    end_quietly_when_stdout_closes();
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// A reader that stops reading (`stormsim bench … | head`) ends the command
/// as it ends `cat`: by SIGPIPE's default action, quietly. Rust's runtime
/// ignores SIGPIPE, so that a write to a closed pipe fails instead, and
/// `println!` panics on that failure (and a release build aborts). Ended
/// this way mid-run, a command leaves its output folder as a kill at any
/// other moment does (see `outdir`).
fn end_quietly_when_stdout_closes() {
    // SAFETY: first thing in `main`, before any other thread exists; the
    // default action is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Validate {
            replications,
            out,
            models,
            duration_scale,
        } => validate(&models, &out, replications, duration_scale),
        Command::Plot { dir } => plot_cmd::plot(&dir),
        Command::Import {
            source,
            files,
            out,
            force,
        } => import_cmd::import(source, &files, out.as_deref(), force),
        Command::Check {
            model,
            sets,
            memory_limit,
            warnings,
        } => {
            if is_sweep_file(&model) {
                return Ok(check_sweep(&model, &sets, memory_limit, &warnings));
            }
            let Some(loaded) = load_or_report(&model, &sets, None) else {
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            };
            if !fits_in_memory(&model, &loaded, memory_limit) {
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            }
            let n = loaded.variants.len();
            println!(
                "{}: ok — model {:?}, {n} variant{}: {}",
                model.display(),
                loaded.name,
                if n == 1 { "" } else { "s" },
                loaded
                    .variants
                    .iter()
                    .map(|v| v.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            print_warnings(&model, "", &loaded, &warnings);
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge { sweep, shards, out } => {
            // Merging runs nothing: no ceiling holds back reading what ran.
            let Some(loaded) = load_sweep_or_report(&sweep, u64::MAX, false) else {
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            };
            let out = out.unwrap_or_else(|| Path::new("outputs").join(&loaded.spec.name));
            sweep_cmd::merge_shards(&loaded, &out, &shards)
        }
        Command::Sweep {
            sweep,
            out,
            jobs,
            resume,
            max_runs,
            shard,
            force,
            quiet,
            accept_partial,
            fail_on,
            memory_limit,
            warnings,
        } => {
            let shard = match shard.as_deref().map(sweep_cmd::parse_shard).transpose() {
                Ok(s) => s,
                Err(message) => return Ok(refuse(&message)),
            };
            let Some(loaded) = load_sweep_or_report(&sweep, memory_limit, quiet) else {
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            };
            print_sweep_warnings(&loaded, &warnings);
            let out = out.unwrap_or_else(|| Path::new("outputs").join(&loaded.spec.name));
            let _lock =
                match sweep_cmd::claim_folder(&out, &loaded.spec.name, resume || force, resume)? {
                    Ok(lock) => lock,
                    Err(message) => return Ok(refuse(&message)),
                };
            let options = sweep_cmd::SweepOptions {
                jobs: jobs.map(usize::from),
                resume,
                max_runs,
                shard,
                quiet,
                fail_on: fail_on.fail_on.clone(),
            };
            let ran = match sweep_cmd::run_sweep(&loaded, &out, &options)? {
                Ok(ran) => ran,
                Err(message) => return Ok(refuse(&message)),
            };
            // Every failing run, up to a screenful; the rest counted.
            const LISTED: usize = 50;
            for line in ran.failing.iter().take(LISTED) {
                eprintln!("FAIL {}/{line}", loaded.spec.name);
            }
            if ran.failing.len() > LISTED {
                eprintln!("FAIL ... and {} more runs", ran.failing.len() - LISTED);
            }
            let exit = partial_exit(ran.partial, "runs", accept_partial);
            Ok(fail_on.exit(ran.failing.len(), "runs", exit))
        }
        Command::Search {
            sweep,
            out,
            jobs,
            quiet,
            memory_limit,
            warnings,
        } => {
            let Some(loaded) = load_sweep_or_report(&sweep, memory_limit, quiet) else {
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            };
            print_sweep_warnings(&loaded, &warnings);
            let out = out.unwrap_or_else(|| Path::new("outputs").join(&loaded.spec.name));
            let _lock = match sweep_cmd::claim_folder(&out, &loaded.spec.name, true, false)? {
                Ok(lock) => lock,
                Err(message) => return Ok(refuse(&message)),
            };
            sweep_cmd::run_search(&loaded, &out, jobs.map(usize::from), quiet)
        }
        Command::Margin {
            file,
            out,
            flags,
            jobs,
            quiet,
            memory_limit,
        } => {
            let text = match stormsim_model::read_input_file(&file) {
                Ok(t) => t,
                Err(e) => return Ok(refuse(&format!("cannot read {}: {e}", file.display()))),
            };
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            let is_sweep = doc.get("margin").is_some() || doc.get("model").is_some();
            let loaded = if is_sweep {
                if let Some(flag) = flags.first_given() {
                    return Ok(refuse(&format!(
                        "{} is a sweep file: its `margin` block says what --{flag} would (the flags are for a model file)",
                        file.display()
                    )));
                }
                load_sweep_or_report(&file, memory_limit, quiet)
            } else {
                let name = doc
                    .get("name")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("model");
                let sweep_text = match margin_cmd::sweep_text_for_model(&file, name, &flags) {
                    Ok(t) => t,
                    Err(message) => return Ok(refuse(&message)),
                };
                match stormsim_sweep::Sweep::from_text(&sweep_text, &file, memory_limit) {
                    Ok(s) => Some(s),
                    Err(stormsim_sweep::SweepError::Invalid(ModelError { problems })) => {
                        report_problems(&file, &problems);
                        None
                    }
                    Err(e) => return Ok(refuse(&e.to_string())),
                }
            };
            let Some(loaded) = loaded else {
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            };
            if let Err(problems) = loaded.check_margin() {
                report_problems(&file, &problems);
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            }
            let out = out.unwrap_or_else(|| Path::new("outputs").join(&loaded.spec.name));
            let _lock = match sweep_cmd::claim_folder(&out, &loaded.spec.name, true, false)? {
                Ok(lock) => lock,
                Err(message) => return Ok(refuse(&message)),
            };
            margin_cmd::run_margin(&loaded, &out, jobs.map(usize::from), quiet)
        }
        Command::Probability {
            model,
            variants,
            runs,
            splitting,
            runs_per_stage,
            repetitions,
            seed,
            sets,
            csv,
            jobs,
        } => {
            if !splitting && runs == 0 {
                return Ok(refuse("--runs: expected at least 1"));
            }
            if splitting && (runs_per_stage < 2 || repetitions < 2) {
                return Ok(refuse(
                    "--splitting needs --runs-per-stage and --repetitions of at least 2",
                ));
            }
            let text = match stormsim_model::read_input_file(&model) {
                Ok(t) => t,
                Err(e) => return Ok(refuse(&format!("cannot read {}: {e}", model.display()))),
            };
            let parsed = match parse_sets(&sets) {
                Ok(parsed) => parsed
                    .into_iter()
                    .map(|(p, v)| (p, parse_cli_value(&v)))
                    .collect::<Vec<_>>(),
                Err(bad) => {
                    for b in bad {
                        eprintln!("{}: {b}", model.display());
                    }
                    return Ok(ExitCode::from(EXIT_BAD_INPUT));
                }
            };
            use stormsim_sweep::probability::{per_variant, Method};
            let method = Method::from_flags(splitting, runs, runs_per_stage, repetitions);
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(jobs.map_or(0, usize::from))
                .build()
                .context("cannot start the worker threads")?;
            let rows = match pool
                .install(|| per_variant(&text, model.parent(), &parsed, &variants, method, seed))
            {
                Ok(rows) => rows,
                Err(problems) => {
                    report_problems(&model, &problems);
                    return Ok(ExitCode::from(EXIT_BAD_INPUT));
                }
            };
            probability_cmd::report(&rows, csv)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            model,
            variants,
            all,
            hold,
            sets,
            general,
        } => {
            if hold {
                bench::hold(&[1_000, 100_000, 1_000_000], 5_000_000);
                return Ok(ExitCode::SUCCESS);
            }
            let Some(loaded) = load_or_report(&model, &sets, None) else {
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            };
            let chosen = match (all, variants.is_empty()) {
                (true, _) => Vec::new(),
                (false, false) => variants,
                (false, true) => vec![loaded.variants[0].name.clone()],
            };
            if let Some(message) = loaded.unknown_variants(&chosen) {
                eprintln!("error: {message}");
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            }
            bench::bench(&loaded, &chosen, general)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Run {
            models,
            out,
            seed,
            sets,
            variants,
            quiet,
            format,
            columns,
            attempts,
            force,
            accept_partial,
            fail_on,
            memory_limit,
            warnings,
        } => {
            if out.is_some() && models.len() > 1 {
                eprintln!(
                    "error: --out takes one model; with several, each goes to outputs/<name>/"
                );
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            }
            // Check every model before running any: a typo in the last file
            // should not surface after minutes of work.
            let mut loaded = Vec::new();
            // `run models/*.json` meets the sweep files too: with other files
            // beside them they are skipped, named; alone, refused.
            let (sweeps, models): (Vec<_>, Vec<_>) =
                models.into_iter().partition(|m| is_sweep_file(m));
            for sweep in &sweeps {
                eprintln!(
                    "{}: a sweep file, not a model: run it with `stormsim sweep {0}` (or `stormsim search {0}`){}",
                    sweep.display(),
                    if models.is_empty() { "" } else { "; skipped" }
                );
            }
            if models.is_empty() {
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            }
            // Every model's problems at once, then the exit.
            let mut bad = false;
            for model in &models {
                match load_or_report(model, &sets, seed) {
                    Some(m) if fits_in_memory(model, &m, memory_limit) => loaded.push(m),
                    _ => bad = true,
                }
            }
            if bad {
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            }
            // Of every variant, also those --variant leaves out: the file
            // is what the warnings are about.
            for (model, m) in models.iter().zip(&loaded) {
                print_warnings(model, "", m, &warnings);
            }
            if !variants.is_empty() {
                let [model] = loaded.as_mut_slice() else {
                    eprintln!("error: --variant takes one model");
                    return Ok(ExitCode::from(EXIT_BAD_INPUT));
                };
                if let Err(message) = model.select_variants(&variants) {
                    eprintln!("error: {message}");
                    return Ok(ExitCode::from(EXIT_BAD_INPUT));
                }
            }
            // The comparison's columns, per model, before anything runs.
            let data = format.is_some_and(table::Format::is_data);
            if data && loaded.len() > 1 {
                return Ok(refuse(&format!(
                    "--format {} takes one model: the data of several would not be one document; run them one at a time",
                    if format == Some(table::Format::Csv) { "csv" } else { "json" }
                )));
            }
            let mut tables = Vec::new();
            for model in &loaded {
                match table::resolve(&columns, &table::Available::of_model(model)) {
                    Ok(chosen) => tables.push(output::TableOptions {
                        format: format.unwrap_or(table::Format::Table),
                        columns: chosen,
                        print: !quiet || format.is_some() || !columns.is_empty(),
                    }),
                    Err(message) => return Ok(refuse(&message)),
                }
            }
            // As given (trimmed): each parses back to the same override.
            let overrides: Vec<String> = parse_sets(&sets)
                .unwrap_or_default()
                .iter()
                .map(|(p, v)| format!("{p}={v}"))
                .collect();
            let dirs: Vec<PathBuf> = loaded
                .iter()
                .map(|m| {
                    out.clone()
                        .unwrap_or_else(|| Path::new("outputs").join(&m.name))
                })
                .collect();
            // Two models of one name would share a folder, the second
            // silently replacing the first's outputs.
            for (i, dir) in dirs.iter().enumerate() {
                if let Some(j) = (0..i).find(|&j| dirs[j] == *dir) {
                    return Ok(refuse(&format!(
                        "{} and {} are both the model {:?}: their outputs would share {}; run them one at a time with --out",
                        models[j].display(),
                        models[i].display(),
                        loaded[i].name,
                        dir.display()
                    )));
                }
            }
            // Refuse before running anything: a clobbered folder cannot be
            // undone. Each folder stays locked until its outputs are in place.
            let mut locks = Vec::new();
            for (model, dir) in loaded.iter().zip(&dirs) {
                match outdir::OutputLock::acquire(dir)? {
                    Ok(lock) => locks.push(lock),
                    Err(message) => return Ok(refuse(&message)),
                }
                outdir::clean_leftovers(dir)?;
                let checked = if force {
                    Ok(())
                } else {
                    output::check_run_folder(dir, &model.name)
                };
                if let Err(message) =
                    checked.and_then(|()| outdir::refuse_foreign(dir, &outdir::run_files()))
                {
                    return Ok(refuse(&message));
                }
            }
            // A run with overrides into the model's own folder replaces its
            // reference outputs: say so (summary.json records the overrides).
            if !overrides.is_empty() {
                for (model, dir) in loaded.iter().zip(&dirs) {
                    if is_default_folder(dir, &model.name) {
                        eprintln!(
                            "warning: --set changes the model, yet its outputs go to {}, the folder of the model as written: they replace what is there (pass --out DIR to keep them apart)",
                            dir.display()
                        );
                    }
                }
            }
            if !variants.is_empty() && is_default_folder(&dirs[0], &loaded[0].name) {
                eprintln!(
                    "warning: --variant runs {} of the model's variants, yet the outputs go to {}, the folder of the whole model: they replace what is there (pass --out DIR to keep them apart)",
                    loaded[0].variants.len(),
                    dirs[0].display()
                );
            }
            let mut partial = 0;
            let mut failing = 0;
            for ((model, dir), table) in loaded.iter().zip(&dirs).zip(&tables) {
                let ran = output::run_and_write(model, &overrides, dir, quiet, attempts, table)?;
                partial += ran.stopped;
                for (variant, verdict) in &ran.verdicts {
                    if let Some(line) = fail_on.failing(verdict.as_ref()) {
                        eprintln!("FAIL {}/{variant}: {line}", model.name);
                        failing += 1;
                    }
                }
            }
            drop(locks);
            let exit = partial_exit(partial, "variants", accept_partial);
            Ok(fail_on.exit(failing, "variants", exit))
        }
    }
}

/// `--jobs N`: a whole number from 1 to [`MAX_JOBS`].
fn parse_jobs(text: &str) -> std::result::Result<u16, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if (1..=u64::from(MAX_JOBS)).contains(&n) => Ok(n as u16),
        Ok(n) => Err(format!(
            "{n} worker threads: --jobs takes 1 to {MAX_JOBS} (more only add threads that wait for the cores)"
        )),
        Err(_) => Err(format!("expected a whole number from 1 to {MAX_JOBS}")),
    }
}

/// Says why a command is refused; exit code 2.
fn refuse(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_BAD_INPUT)
}

/// The exit code of a command whose outputs are written, `partial` of its
/// `what` (runs, variants) having stopped at a limit: 3 and a line saying so,
/// unless they are accepted.
fn partial_exit(partial: usize, what: &str, accept_partial: bool) -> ExitCode {
    if partial == 0 {
        return ExitCode::SUCCESS;
    }
    let what = if partial == 1 {
        what.trim_end_matches('s')
    } else {
        what
    };
    eprintln!(
        "{}: {partial} {what} stopped at one of the model's limits: their numbers describe cut-short runs{}",
        if accept_partial { "note" } else { "error" },
        if accept_partial {
            ""
        } else {
            " (exit code 3; pass --accept-partial to accept them)"
        }
    );
    if accept_partial {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_PARTIAL)
    }
}

/// `stormsim validate`: the table on stdout, validation.csv (no wall time in
/// it, so the same bytes every run), the wall time on stderr. A model the
/// formulas do not cover is a bad model (exit 2); a failed row exits 1.
fn validate(models: &Path, out: &Path, replications: u32, duration_scale: f64) -> Result<ExitCode> {
    use stormsim_validate::{run_suite, Options, ValidateError};
    let started = std::time::Instant::now();
    let options = Options {
        replications,
        duration_scale,
    };
    let validation = match run_suite(models, &options) {
        Ok(v) => v,
        Err(e @ (ValidateError::Io { .. } | ValidateError::Csv(_))) => return Err(e.into()),
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
    };
    print!("{}", validation.table());
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let csv = out.join("validation.csv");
    output::write_atomically(&csv, validation.csv()?.as_bytes())?;
    eprintln!(
        "wrote {} in {:.1} s",
        csv.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(if validation.all_pass() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Prints every problem of a file, under a line that counts them.
fn report_problems(path: &Path, problems: &[Problem]) {
    let n = problems.len();
    eprintln!(
        "{}: {n} problem{} found:",
        path.display(),
        if n == 1 { "" } else { "s" }
    );
    for p in problems {
        eprintln!("  {p}");
    }
}

/// Loads a sweep file; on a problem in it or its model prints every problem
/// (or that the file cannot be read) and returns `None`. Every point's model
/// is checked first, which takes a minute for a million points: unless
/// `quiet`, a line every 10 s says how many are.
fn load_sweep_or_report(
    path: &Path,
    memory_limit: u64,
    quiet: bool,
) -> Option<stormsim_sweep::Sweep> {
    let (checked, points) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let finished = AtomicBool::new(false);
    let loaded = std::thread::scope(|scope| {
        if !quiet {
            scope.spawn(|| {
                output::say_every_10_s(&finished, |elapsed| {
                    let (done, all) = (
                        checked.load(Ordering::Relaxed),
                        points.load(Ordering::Relaxed),
                    );
                    format!("  ... {elapsed:.0} s: {done}/{all} points' models checked")
                })
            });
        }
        let _stop_progress = output::SetOnDrop(&finished);
        let progress = |done: usize, all: usize| {
            checked.fetch_max(done, Ordering::Relaxed);
            points.store(all, Ordering::Relaxed);
        };
        stormsim_sweep::Sweep::load_with_progress(path, memory_limit, &progress)
    });
    match loaded {
        Ok(s) => Some(s),
        Err(stormsim_sweep::SweepError::Invalid(ModelError { problems })) => {
            report_problems(path, &problems);
            None
        }
        Err(stormsim_sweep::SweepError::Io { path, source }) => {
            eprintln!(
                "error: cannot read the sweep file {}: {source}",
                path.display()
            );
            None
        }
    }
}

/// `stormsim check` on a sweep file: the sweep, its model and the model at
/// every point and at the search's ends, as `sweep` and `search` load them.
fn check_sweep(
    path: &Path,
    sets: &[String],
    memory_limit: u64,
    warnings: &WarningsArgs,
) -> ExitCode {
    if !sets.is_empty() {
        eprintln!(
            "error: {} is a sweep file: --set applies to a model (a sweep's overrides are its `set`)",
            path.display()
        );
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let Some(sweep) = load_sweep_or_report(path, memory_limit, false) else {
        return ExitCode::from(EXIT_BAD_INPUT);
    };
    let plural = |n: usize, what: &str| format_counted(n as u64, what);
    let reps = sweep.spec.replications as usize;
    let mut what = Vec::new();
    if !sweep.points.is_empty() {
        what.push(format!(
            "{} × {} = {}",
            plural(sweep.points.len(), "point"),
            plural(reps, "replication"),
            plural(sweep.runs(), "run")
        ));
    }
    if let Some(search) = &sweep.spec.search {
        what.push(format!(
            "a search of {} from {} to {} ({} per probe)",
            search.path,
            search.from,
            search.to,
            plural(reps, "replication")
        ));
    }
    if let Some(margin) = &sweep.spec.margin {
        if let Err(problems) = sweep.check_margin() {
            report_problems(path, &problems);
            return ExitCode::from(EXIT_BAD_INPUT);
        }
        what.push(format!(
            "a storm margin at {} over {} to {}",
            plural(stormsim_sweep::Sweep::margin_loads(margin).len(), "load"),
            margin.trigger.from,
            margin.trigger.to
        ));
    }
    let model = match &sweep.spec.model {
        stormsim_sweep::ModelSource::File(_) => sweep.model_path.display().to_string(),
        stormsim_sweep::ModelSource::Inline(_) => "its inline model".into(),
    };
    println!(
        "{}: ok — sweep {:?} of {model}: {}",
        path.display(),
        sweep.spec.name,
        what.join("; ")
    );
    print_sweep_warnings(&sweep, warnings);
    ExitCode::SUCCESS
}

/// Whether `path` is a sweep file: named `*.sweep.json`, or a JSON object
/// with a `model` (which a model file never has) and no `services` or
/// `workloads` (which a sweep file never has).
fn is_sweep_file(path: &Path) -> bool {
    if path.to_string_lossy().ends_with(".sweep.json") {
        return true;
    }
    stormsim_model::read_input_file(path)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|doc| doc.as_object().cloned())
        .is_some_and(|o| {
            o.contains_key("model") && !o.contains_key("services") && !o.contains_key("workloads")
        })
}

/// Whether `dir` is `outputs/<model>/`, where `run` writes by default.
fn is_default_folder(dir: &Path, model: &str) -> bool {
    let default = Path::new("outputs").join(model);
    let strip = |p: &Path| -> PathBuf {
        p.components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect()
    };
    if strip(dir) == strip(&default) {
        return true;
    }
    match (dir.canonicalize(), default.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// `--set PATH=VALUE` arguments as (path, value text), trimmed; or the ones
/// that are not of that form.
fn parse_sets(sets: &[String]) -> std::result::Result<Vec<(String, String)>, Vec<String>> {
    let mut parsed = Vec::new();
    let mut bad = Vec::new();
    for set in sets {
        match set.split_once('=') {
            Some((p, v)) if !p.trim().is_empty() => {
                parsed.push((p.trim().to_string(), v.trim().to_string()))
            }
            _ => bad.push(format!("--set {set:?}: expected PATH=VALUE")),
        }
    }
    if bad.is_empty() {
        Ok(parsed)
    } else {
        Err(bad)
    }
}

/// Loads a model; on a problem (a file that cannot be read, a bad `--set`, a
/// model error) prints every problem and returns `None`.
/// The default of `--memory-limit-gb`: `stormsim_sim::memory::DEFAULT_MEMORY_LIMIT_BYTES`
/// in GiB (a test holds them together).
const DEFAULT_MEMORY_LIMIT_GB: &str = "4";

/// `--memory-limit-gb` in bytes, or `None` (said why) if it is not a
/// positive number.
fn parse_memory_limit(text: &str) -> std::result::Result<u64, String> {
    match text.parse::<f64>() {
        Ok(gb) if gb.is_finite() && gb > 0.0 => {
            Ok((gb * f64::from(1u32 << 30)).min(u64::MAX as f64) as u64)
        }
        _ => Err(format!("expected a positive number of GiB, got {text:?}")),
    }
}

/// Whether `loaded`'s estimated memory fits under `limit` bytes; if not, the
/// refusal is reported as a problem of the file, at the path of the largest
/// part (see `stormsim_sim::memory`).
fn fits_in_memory(path: &Path, loaded: &LoadedModel, limit: u64) -> bool {
    match check_memory(loaded, limit) {
        Ok(_) => true,
        Err(too_big) => {
            report_problems(path, &[Problem::new(too_big.path(), too_big.to_string())]);
            false
        }
    }
}

fn load_or_report(path: &Path, sets: &[String], seed: Option<u64>) -> Option<LoadedModel> {
    let text = match stormsim_model::read_input_file(path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: cannot read the model file {}: {e}", path.display());
            return None;
        }
    };
    let parsed: Vec<(String, serde_json::Value)> = match parse_sets(sets) {
        Ok(parsed) => parsed
            .into_iter()
            .map(|(p, v)| {
                let value = parse_cli_value(&v);
                (p, value)
            })
            .collect(),
        Err(bad) => {
            for b in bad {
                eprintln!("{}: {b}", path.display());
            }
            return None;
        }
    };
    match load_model_in(&text, path.parent(), &parsed, seed) {
        Ok(loaded) => {
            // An override that reached several places says how many, and
            // where: a wildcard that set more than was meant shows here.
            for line in &loaded.selections {
                eprintln!("{}: note: {line}", path.display());
            }
            Some(loaded)
        }
        Err(ModelError { problems }) => {
            report_problems(path, &problems);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_memory_limit_is_the_simulators() {
        assert_eq!(
            parse_memory_limit(DEFAULT_MEMORY_LIMIT_GB),
            Ok(stormsim_sim::memory::DEFAULT_MEMORY_LIMIT_BYTES)
        );
        assert!(parse_memory_limit("0").is_err());
        assert!(parse_memory_limit("nan").is_err());
        assert_eq!(parse_memory_limit("0.5"), Ok(1 << 29));
    }
}
