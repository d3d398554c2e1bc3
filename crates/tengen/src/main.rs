//! `tengen`: the Go engine and appliance daemon. Each subcommand is one tool.

mod accel;
mod analysis;
mod backend;
mod bench;
mod bench_search;
mod bundled;
mod classic_eval;
mod config;
mod convert;
mod evaluators;
mod gtp;
mod inputs;
mod match_runner;
mod network;
mod score;
mod serve;
mod setup;
mod unit;
mod vision;

use clap::{Parser, Subcommand};

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
}

fn main() -> std::process::ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    // KataGo spells this flag with one dash; accept that spelling too.
    let args = std::env::args().map(|a| {
        if a == "-quit-without-waiting" {
            "--quit-without-waiting".to_string()
        } else {
            a
        }
    });
    let cli = Cli::parse_from(args);
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
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tengen: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
