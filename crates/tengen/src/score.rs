//! `tengen rules` and `tengen score`: the rules engine from the command line.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use tengen_rules::{sgf, GameOptions, Outcome, Rules};

/// Options of `tengen rules`.
#[derive(Args, Debug)]
pub struct RulesArgs {
    /// A preset name (japanese, chinese, aga, tromp-taylor, ...), a KataGo JSON rules object or a compact string.
    rules: String,
    /// Komi, overriding the preset's.
    #[arg(long, allow_hyphen_values = true)]
    komi: Option<f32>,
}

/// Options of `tengen score`.
#[derive(Args, Debug)]
pub struct ScoreArgs {
    /// The SGF file (`-` reads standard input).
    file: PathBuf,
    /// Score under these rules instead of the record's `RU`.
    #[arg(long)]
    rules: Option<String>,
    /// Komi, overriding the record's `KM`.
    #[arg(long, allow_hyphen_values = true)]
    komi: Option<f32>,
    /// Play territory scoring's cleanup phases instead of stopping when the main phase ends.
    #[arg(long)]
    cleanup: bool,
}

fn parse_komi(k: f32) -> Result<f32> {
    if !tengen_rules::komi_is_valid(k as f64) {
        bail!("komi {k} is not a multiple of 0.5 between -400 and 400");
    }
    Ok(k)
}

/// Prints how a rules text is understood.
pub fn rules(a: RulesArgs) -> Result<()> {
    let mut r = Rules::parse(&a.rules)?;
    if let Some(k) = a.komi {
        r.komi = parse_komi(k)?;
    }
    println!("name:    {}", r.nice_name().unwrap_or("(custom)"));
    println!("compact: {r}");
    println!("json:    {}", r.to_json());
    Ok(())
}

/// Replays an SGF record and prints the score of its final position.
pub fn score(a: ScoreArgs) -> Result<()> {
    let text = if a.file.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading standard input")?;
        s
    } else {
        let bytes =
            std::fs::read(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let record = sgf::load(&text).with_context(|| format!("{}", a.file.display()))?;
    for w in &record.warnings {
        log::warn!("{}: {w}", a.file.display());
    }
    let mut game = record.game;
    if let Some(r) = &a.rules {
        let mut rules = Rules::parse(r)?;
        rules.komi = game.rules().komi;
        game.set_rules(rules)
            .context("replaying under the new rules")?;
    }
    if let Some(k) = a.komi {
        game.set_komi(parse_komi(k)?);
    }
    if a.cleanup {
        let options = GameOptions {
            cleanup_phases: true,
            ..*game.options()
        };
        game.set_options(options)
            .context("replaying with cleanup phases")?;
    }
    println!(
        "rules:   {} (komi {})",
        game.rules().nice_name().unwrap_or("custom"),
        game.rules().komi
    );
    println!("moves:   {}", game.turns().len());
    let area = if game.is_over() {
        println!("ended:   by the rules");
        game.area_now()
    } else {
        println!("ended:   not by the rules; scoring the position as it stands (every stone counts as alive)");
        game.end_and_score_now()
    };
    for row in area.rows() {
        println!("  {row}");
    }
    match game.outcome() {
        Some(o @ Outcome::Scored { .. })
        | Some(o @ Outcome::Resigned { .. })
        | Some(o @ Outcome::NoResult) => {
            println!("result:  {}", o.sgf_result());
        }
        None => bail!("the game could not be scored"),
    }
    if let Some(re) = &record.result {
        println!("record:  {re}");
    }
    Ok(())
}
