//! KataGo's command line for `tengen gtp` and `tengen analysis`. KataGo writes its flags
//! with one dash (`-model M -config CFG -override-config K=V`); before clap parses, a
//! single-dash word that is a long option of the subcommand is respelled with two, so the
//! one parser (the subcommand's clap arguments) reads both spellings. Also the options the
//! two subcommands share: KataGo's config files, overrides and human model.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

use crate::katago_config::KataConfig;
use crate::katago_keys::{self, Report, Settings, Tool};

/// The subcommands that take KataGo's spelling; their usage errors exit with 1, as
/// KataGo's do.
pub const KATAGO_SUBCOMMANDS: &[&str] = &["gtp", "analysis"];

/// The subcommand `args` (program name first) run, if it takes KataGo's spelling.
pub fn katago_subcommand(args: &[OsString]) -> Option<&str> {
    let name = args.get(1)?.to_str()?;
    KATAGO_SUBCOMMANDS.contains(&name).then_some(name)
}

/// `args` with KataGo's `-word` and `-word=value` respelled `--word` where `word` is a
/// long option of the subcommand; other arguments as they were. A single-dash word that
/// is no option is an error naming it (clap would name only its first letter).
pub fn respell(cli: &clap::Command, args: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let Some(name) = katago_subcommand(&args).map(str::to_string) else {
        return Ok(args);
    };
    // Built, so that the generated options (`help`) are there too.
    let mut cli = cli.clone();
    cli.build();
    let Some(sub) = cli.find_subcommand(&name) else {
        return Ok(args);
    };
    let long = |word: &str| sub.get_arguments().any(|a| a.get_long() == Some(word));
    let short = |c: char| sub.get_arguments().any(|a| a.get_short() == Some(c));
    let mut out = Vec::with_capacity(args.len());
    let mut rest = args.into_iter();
    out.extend(rest.by_ref().take(2));
    for arg in rest.by_ref() {
        let Some(text) = arg.to_str() else {
            out.push(arg);
            continue;
        };
        if text == "--" {
            out.push(arg);
            break;
        }
        let word = match text.strip_prefix('-') {
            Some(w) if !w.starts_with('-') && w.chars().count() > 1 => w,
            _ => {
                out.push(arg);
                continue;
            }
        };
        let option = word.split('=').next().unwrap_or(word);
        let first = option.chars().next().unwrap_or('-');
        if long(option) {
            out.push(format!("-{text}").into());
        } else if first.is_ascii_alphabetic() && !short(first) {
            return Err(format!(
                "unknown option -{option} (tengen {name} --help lists the options)"
            ));
        } else {
            // A negative number, or short flags clap reads.
            out.push(arg);
        }
    }
    out.extend(rest);
    Ok(out)
}

/// KataGo's config options, shared by `tengen gtp` and `tengen analysis`.
#[derive(Args, Debug, Default)]
pub struct KataArgs {
    /// A KataGo config file (`key = value` lines; KataGo's `-config`), repeatable: a later
    /// file's key wins. docs/configuration.md lists the keys Tengen reads. Flags given on
    /// the command line win over the files.
    #[arg(long, value_name = "FILE")]
    config: Vec<PathBuf>,
    /// KataGo config keys over the files: `KEY=VALUE,KEY=VALUE,...` (KataGo's
    /// `-override-config`), repeatable; an empty value removes a key.
    #[arg(long, value_name = "KEY=VALUE,...")]
    override_config: Vec<String>,
    /// A human-SL network (KataGo's `-human-model`): not supported yet.
    #[arg(long, value_name = "FILE")]
    human_model: Option<PathBuf>,
}

impl KataArgs {
    /// The settings of the config files and overrides for `tool`, and what the start-up
    /// log should say about them.
    pub fn settings(&self, tool: Tool) -> Result<(Settings, Report)> {
        if let Some(m) = &self.human_model {
            bail!(
                "-human-model {}: human-SL models are not supported yet",
                m.display()
            );
        }
        let cfg = KataConfig::load(&self.config, &self.override_config)?;
        Ok(katago_keys::read(&cfg, tool)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        command: Sub,
    }

    #[derive(clap::Subcommand)]
    enum Sub {
        Gtp {
            #[arg(long)]
            model: Option<String>,
            #[arg(long)]
            quit_without_waiting: bool,
        },
        Other {
            #[arg(long)]
            model: Option<String>,
        },
    }

    fn respelled(args: &[&str]) -> Result<Vec<String>, String> {
        let args = args.iter().map(OsString::from).collect();
        respell(&Cli::command(), args)
            .map(|v| v.into_iter().map(|a| a.into_string().unwrap()).collect())
    }

    #[test]
    fn single_dash_long_options_are_respelled_for_katagos_subcommands() {
        let got = respelled(&[
            "t",
            "gtp",
            "-model",
            "m",
            "-quit-without-waiting",
            "--model=x",
        ]);
        assert_eq!(
            got.unwrap(),
            [
                "t",
                "gtp",
                "--model",
                "m",
                "--quit-without-waiting",
                "--model=x"
            ]
        );
        assert_eq!(
            respelled(&["t", "gtp", "-model=m"]).unwrap()[2],
            "--model=m"
        );
        // Values and negative numbers stay as they are, and so does all after `--`.
        let got = respelled(&["t", "gtp", "-5", "-", "--", "-nonsense"]).unwrap();
        assert_eq!(got, ["t", "gtp", "-5", "-", "--", "-nonsense"]);
        let e = respelled(&["t", "gtp", "-modle", "m"]).unwrap_err();
        assert!(e.contains("unknown option -modle"), "{e}");
        assert_eq!(respelled(&["t", "gtp", "-help"]).unwrap()[2], "--help");
        // Other subcommands keep clap's own reading.
        assert_eq!(
            respelled(&["t", "other", "-model"]).unwrap(),
            ["t", "other", "-model"]
        );
    }
}
