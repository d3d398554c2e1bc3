//! The unfinished game's records as a replay needs them: the journal's records with what
//! cancels out taken away (an undo and the move it took back, a setting changed again
//! before the next move). Replaying it gives the same game as replaying the journal, so
//! the journal can be rewritten as it when it grows, and the engine rebuilt from it
//! without reading the disk.

use tengen_protocol::gtp::Command;

use crate::record::Record;

/// Records past which the game is refused as too long to record (a full 19x19 game is a
/// few hundred moves; this bounds the journal and a replay, whatever a client sends).
pub const MAX_RECORDS: usize = 20_000;

/// The effective records of the unfinished game, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    records: Vec<Record>,
}

/// What a record does to the history.
#[derive(Debug, PartialEq)]
enum Kind {
    /// Takes back the last move.
    Undo,
    /// Puts stones on the board or ends the game: later settings cannot move before it.
    Move,
    /// A setting whose last value before the next move is all that counts.
    Setting(Setting),
    /// Anything else (the board size, which starts a history).
    Other,
}

/// The settings a record may change.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Setting {
    Rules,
    Komi,
    Level,
    Analysis,
    EngineSide,
}

fn kind(r: &Record) -> Kind {
    match r {
        Record::Gtp(Command::Undo) => Kind::Undo,
        Record::Gtp(
            Command::Play(..) | Command::FixedHandicap(_) | Command::SetFreeHandicap(_),
        )
        | Record::Resign(_) => Kind::Move,
        Record::Gtp(Command::KgsRules(_) | Command::KataSetRules(_)) => {
            Kind::Setting(Setting::Rules)
        }
        Record::Gtp(Command::Komi(_)) => Kind::Setting(Setting::Komi),
        Record::Gtp(Command::TengenLevel(_)) => Kind::Setting(Setting::Level),
        Record::Analysis { .. } => Kind::Setting(Setting::Analysis),
        Record::EngineSide(_) => Kind::Setting(Setting::EngineSide),
        Record::Gtp(_) => Kind::Other,
    }
}

impl History {
    /// The history of `records`, replayed in order.
    pub fn of(records: &[Record]) -> History {
        let mut h = History::default();
        for r in records {
            h.push(r.clone());
        }
        h
    }

    /// The records a replay needs.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// How many records a replay needs.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there is nothing to replay.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Adds one applied record.
    pub fn push(&mut self, record: Record) {
        match kind(&record) {
            Kind::Undo => {
                // Only a successful undo is recorded, so a move is there to take back.
                if let Some(i) = self.records.iter().rposition(|r| kind(r) == Kind::Move) {
                    self.records.remove(i);
                    return;
                }
            }
            Kind::Setting(s) => {
                let since_move = self
                    .records
                    .iter()
                    .rposition(|r| kind(r) == Kind::Move)
                    .map_or(0, |i| i + 1);
                if let Some(j) = self.records[since_move..]
                    .iter()
                    .rposition(|r| kind(r) == Kind::Setting(s))
                {
                    self.records.remove(since_move + j);
                }
            }
            Kind::Move | Kind::Other => {}
        }
        self.records.push(record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(lines: &[&str]) -> Vec<String> {
        let records: Vec<Record> = lines.iter().map(|s| Record::parse(s).unwrap()).collect();
        History::of(&records)
            .records()
            .iter()
            .map(Record::to_string)
            .collect()
    }

    #[test]
    fn an_undo_takes_its_move_away() {
        assert_eq!(
            of(&["boardsize 9", "play B E5", "play W C3", "undo", "play W G7"]),
            ["boardsize 9", "play B E5", "play W G7"]
        );
        assert_eq!(
            of(&["boardsize 9", "play B E5", "komi 6.5", "undo"]),
            ["boardsize 9", "komi 6.5"]
        );
    }

    #[test]
    fn a_setting_changed_before_the_next_move_keeps_its_last_value() {
        assert_eq!(
            of(&[
                "boardsize 9",
                "komi 7",
                "kata-set-rules chinese",
                "komi 6.5",
                "kgs-rules japanese",
                "komi 5.5",
            ]),
            ["boardsize 9", "kgs-rules japanese", "komi 5.5"]
        );
        // A move in between keeps both: the first was in force when it was played.
        assert_eq!(
            of(&[
                "boardsize 9",
                "kata-set-rules chinese",
                "play B E5",
                "kata-set-rules japanese"
            ]),
            [
                "boardsize 9",
                "kata-set-rules chinese",
                "play B E5",
                "kata-set-rules japanese"
            ]
        );
    }

    #[test]
    fn settings_spam_stays_bounded() {
        let mut lines = vec!["boardsize 19".to_string()];
        for i in 0..1000 {
            lines.push(format!("komi {}", i % 7));
            lines.push("kata-set-rules japanese".into());
            lines.push("tengen-analysis on off".into());
        }
        let records: Vec<Record> = lines.iter().map(|s| Record::parse(s).unwrap()).collect();
        assert_eq!(History::of(&records).len(), 4);
    }
}
