//! What the journal records: a GTP command that changed the game, or one of the
//! appliance's own settings and events, each with a canonical text line (the journal's
//! format, which journals written before these types existed already follow).

use std::fmt;

use tengen_protocol::gtp::Command;
use tengen_rules::Player;

use crate::payload::EngineSide;

/// One journal record.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// A GTP command that changed the game (see [`Command::changes_game`]).
    Gtp(Command),
    /// `tengen-engine-side black|white|none`: which side the engine plays.
    EngineSide(EngineSide),
    /// `tengen-resign COLOR`: a player resigned.
    Resign(Player),
    /// `tengen-analysis on|off on|off`: whether analysis is published, with ownership.
    Analysis {
        /// Analysis is published.
        on: bool,
        /// With ownership.
        ownership: bool,
    },
}

impl Record {
    /// Reads a journal line.
    pub fn parse(line: &str) -> Result<Record, String> {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or("");
        let args: Vec<&str> = words.collect();
        let on_off = |w: &str| match w {
            "on" => Ok(true),
            "off" => Ok(false),
            _ => Err(format!("{name}: {w:?} is neither on nor off")),
        };
        match (name, args.as_slice()) {
            ("tengen-engine-side", [side]) => EngineSide::parse(side)
                .map(Record::EngineSide)
                .ok_or_else(|| format!("unknown side {side}")),
            ("tengen-resign", [p]) => p
                .parse()
                .map(Record::Resign)
                .map_err(|_| "invalid color".into()),
            ("tengen-analysis", [on, own]) => Ok(Record::Analysis {
                on: on_off(on)?,
                ownership: on_off(own)?,
            }),
            ("tengen-engine-side" | "tengen-resign" | "tengen-analysis", _) => {
                Err(format!("{name}: wrong number of arguments"))
            }
            _ => Command::parse(name, &args)
                .map(Record::Gtp)
                .map_err(|e| format!("{name}: {e}")),
        }
    }
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// The journal line, which [`Record::parse`] reads back as the same record.
impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Record::Gtp(c) => write!(f, "{c}"),
            Record::EngineSide(s) => write!(f, "tengen-engine-side {}", s.name()),
            Record::Resign(p) => write!(f, "tengen-resign {}", p.letter()),
            Record::Analysis { on, ownership } => {
                write!(f, "tengen-analysis {} {}", on_off(*on), on_off(*ownership))
            }
        }
    }
}

impl From<Command> for Record {
    fn from(c: Command) -> Record {
        Record::Gtp(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_lines_of_every_kind_read_back() {
        // Lines as journals have always held them: they parse, and print back the same.
        for line in [
            "boardsize 9",
            "rectangular_boardsize 9 13",
            "komi 7.5",
            "komi -3",
            "kata-set-rules chinese",
            "kgs-rules japanese",
            "tengen-engine-side white",
            "tengen-analysis on off",
            "tengen-level 3",
            "fixed_handicap 2",
            "set_free_handicap D4 Q16",
            "play B E5",
            "play W pass",
            "undo",
            "tengen-resign W",
        ] {
            let r = Record::parse(line).unwrap();
            assert_eq!(r.to_string(), line);
            assert_eq!(Record::parse(&r.to_string()), Ok(r));
        }
        for bad in [
            "tengen-resign",
            "tengen-analysis on",
            "tengen-engine-side up",
            "frob",
        ] {
            assert!(Record::parse(bad).is_err(), "{bad}");
        }
    }
}
