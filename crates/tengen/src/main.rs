//! `tengen`: the Go engine and appliance daemon. Each subcommand is one tool.

mod accel;
mod allocator;
mod analysis;
mod backend;
mod bench;
mod bench_search;
mod bench_vision;
mod bundled;
mod camera;
mod classic_eval;
mod config;
mod convert;
mod evaluators;
mod gtp;
mod inputs;
mod katago_args;
mod katago_config;
mod katago_keys;
mod logging;
mod match_runner;
mod network;
mod score;
mod serve;
mod setup;
mod unit;
mod vision;
mod worker;

use clap::{CommandFactory, Parser, Subcommand};

/// Tengen: KataGo-class Go analysis for electronic boards, kiosks and panels.
#[derive(Parser, Debug)]
#[command(name = "tengen", version = bundled::VERSION, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// KataGo's JSON analysis engine on standard input and output.
    Analysis(analysis::AnalysisArgs),
    /// Measure the engine's speed on this machine.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Print the appliance configuration: defaults, a board profile, the file over them.
    Config(unit::ConfigCommand),
    /// Play and analyse over GTP on standard input and output.
    Gtp(gtp::GtpArgs),
    /// Convert a KataGo network (.bin.gz) to an ONNX graph that follows KataGo's ONNX contract.
    Convert(convert::ConvertArgs),
    /// Show how a rules name, KataGo JSON rules object or compact rules string is understood.
    Rules(score::RulesArgs),
    /// Play two GTP engines against each other and report the win rate and Elo difference.
    Match(match_runner::MatchArgs),
    /// Replay an SGF game record and score its final position.
    Score(score::ScoreArgs),
    /// The appliance daemon: MQTT, serial GTP, the game journal, systemd notify/watchdog.
    Serve(serve::ServeArgs),
    /// The camera board reader: find a board in an image.
    #[command(subcommand)]
    Vision(vision::VisionCommand),
    /// Serve the analysis queries of an MQTT 5 broker's pool (docs/cluster.md).
    Worker(worker::WorkerArgs),
}

fn main() -> std::process::ExitCode {
    allocator::limit_arenas();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // KataGo exits with 1 on a bad command line; clap's own code is 2.
    let usage_code = if katago_args::katago_subcommand(&args).is_some() {
        1
    } else {
        2
    };
    let args = match katago_args::respell(&Cli::command(), args) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("tengen: {e}");
            return std::process::ExitCode::from(usage_code);
        }
    };
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and the version are not errors.
            let code = if e.use_stderr() { usage_code } else { 0 };
            return std::process::ExitCode::from(code);
        }
    };
    // gtp and analysis set up their log from their config.
    if !matches!(cli.command, Command::Gtp(_) | Command::Analysis(_)) {
        logging::init_stderr();
    }
    if matches!(
        cli.command,
        Command::Serve(_) | Command::Worker(_) | Command::Gtp(_) | Command::Analysis(_)
    ) {
        allocator::keep_trimming();
    }
    let result = match cli.command {
        Command::Analysis(a) => analysis::run(a),
        Command::Bench(b) => bench::run(b),
        Command::Config(c) => unit::run(c),
        Command::Convert(c) => convert::run(c),
        Command::Gtp(g) => gtp::run(g),
        Command::Match(m) => match_runner::run(m),
        Command::Rules(r) => score::rules(r),
        Command::Score(s) => score::score(s),
        Command::Serve(s) => serve::run(s),
        Command::Vision(v) => vision::run(v),
        Command::Worker(w) => worker::run(w),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tengen: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
