//! How a game is set up (size, komi, rules, handicap, the engine's side), checked as a
//! whole before anything is applied, and the journal records that set it up.

use tengen_protocol::gtp::{Command, RulesText};
use tengen_rules::handicap::max_fixed_handicap;
use tengen_rules::{komi_is_valid, komi_rule, BoardSize, Rules};

use crate::payload::EngineSide;
use crate::record::Record;

/// How a new game is set up; [`GameSettings::check`] says whether the engine will take it.
#[derive(Clone, Debug, PartialEq)]
pub struct GameSettings {
    /// Board size.
    pub size: BoardSize,
    /// Komi.
    pub komi: f64,
    /// Rules, as `kata-set-rules` takes them (a name or KataGo's JSON).
    pub rules: String,
    /// Fixed handicap stones (0, or 2 up to what the size allows).
    pub handicap: usize,
    /// The engine's side.
    pub engine: EngineSide,
}

impl Default for GameSettings {
    fn default() -> Self {
        GameSettings {
            size: BoardSize::square(19).expect("19x19 is a board size"),
            komi: 7.5,
            rules: "chinese".into(),
            handicap: 0,
            engine: EngineSide::White,
        }
    }
}

impl GameSettings {
    /// Every value the engine would refuse, named; `Ok` means the setup applies whole.
    pub fn check(&self) -> Result<(), String> {
        if !komi_is_valid(self.komi) {
            return Err(format!("komi: {} must be {}", self.komi, komi_rule()));
        }
        if let Err(e) = Rules::parse(&self.rules) {
            return Err(format!("rules: {:?}: {e}", self.rules));
        }
        let most = max_fixed_handicap(self.size);
        if self.handicap == 1 || self.handicap > most {
            return Err(if most < 2 {
                format!(
                    "handicap: {} (a {} board takes no fixed handicap)",
                    self.handicap, self.size
                )
            } else {
                format!(
                    "handicap: {} (use 0 or 2 to {most} on a {} board)",
                    self.handicap, self.size
                )
            });
        }
        if self.rules.contains(['\n', '\r']) {
            return Err("rules: a line break in the rules".into());
        }
        Ok(())
    }

    /// The journal records that set up this game, `extra` (the appliance's own settings)
    /// after the board, komi and rules and before the handicap stones; an error for rules
    /// that [`GameSettings::check`] would refuse.
    pub fn setup_records(&self, extra: &[Record]) -> Result<Vec<Record>, String> {
        let rules = RulesText::parse(&self.rules).map_err(|e| format!("rules: {e}"))?;
        let mut records = vec![
            Record::Gtp(if self.size.width() == self.size.height() {
                Command::Boardsize(self.size)
            } else {
                Command::RectangularBoardsize(self.size)
            }),
            Record::Gtp(Command::Komi(self.komi)),
            Record::Gtp(Command::KataSetRules(rules)),
            Record::EngineSide(self.engine),
        ];
        records.extend(extra.iter().cloned());
        if self.handicap >= 2 {
            records.push(Record::Gtp(Command::FixedHandicap(self.handicap)));
        }
        Ok(records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(f: impl FnOnce(&mut GameSettings)) -> GameSettings {
        let mut g = GameSettings::default();
        f(&mut g);
        g
    }

    #[test]
    fn whatever_the_engine_would_refuse_is_refused_first() {
        assert_eq!(GameSettings::default().check(), Ok(()));
        let err = |g: GameSettings| g.check().unwrap_err();
        assert!(err(with(|g| g.komi = 0.3)).contains("komi"));
        assert!(err(with(|g| g.komi = f64::NAN)).contains("komi"));
        assert!(err(with(|g| g.komi = 401.0)).contains("400"));
        assert!(err(with(|g| g.rules = "chinse".into())).contains("rules"));
        assert!(err(with(|g| g.handicap = 1)).contains("handicap"));
        let seven = BoardSize::square(7).unwrap();
        assert!(err(with(|g| {
            g.size = seven;
            g.handicap = 9
        }))
        .contains("2 to 4"));
        let five = BoardSize::square(5).unwrap();
        assert!(err(with(|g| {
            g.size = five;
            g.handicap = 2
        }))
        .contains("no fixed handicap"));
        assert_eq!(
            with(|g| {
                g.size = seven;
                g.handicap = 4;
                g.komi = -400.0
            })
            .check(),
            Ok(())
        );
    }

    #[test]
    fn setup_lines_name_the_size_komi_rules_side_and_handicap() {
        let g = with(|g| {
            g.size = BoardSize::new(9, 13).unwrap();
            g.handicap = 2;
            g.engine = EngineSide::Black;
        });
        let records = g
            .setup_records(&[Record::Gtp(Command::TengenLevel(
                tengen_protocol::gtp::Level::Classic(3),
            ))])
            .unwrap();
        assert_eq!(
            records.iter().map(Record::to_string).collect::<Vec<_>>(),
            [
                "rectangular_boardsize 9 13",
                "komi 7.5",
                "kata-set-rules chinese",
                "tengen-engine-side black",
                "tengen-level 3",
                "fixed_handicap 2",
            ]
        );
    }
}
