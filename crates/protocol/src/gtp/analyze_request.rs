//! An analysis command's arguments, read once from its words (`[player] [interval]
//! [key value]...`, as KataGo takes them) and printed back as canonical text; their
//! vertices are placed on the board when the analysis starts.

use std::fmt;
use std::time::Duration;

use tengen_rules::{BoardSize, Move, Player};
use tengen_search::FilterRule;

use super::analyze::{AnalyzeArgs, Format};
use super::vertex::Vertex;

/// The arguments as given; what was not given takes its default when placed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnalyzeRequest {
    /// Whose move to analyse.
    pub player: Option<Player>,
    /// Centiseconds between reports, 0 to 1e7.
    pub interval: Option<f64>,
    /// Report at least this many moves.
    pub min_moves: Option<usize>,
    /// Report at most this many moves.
    pub max_moves: Option<usize>,
    /// `ownership` (KataGo's format only).
    pub ownership: Option<bool>,
    /// `ownershipStdev` (KataGo's format only; implies ownership).
    pub ownership_stdev: Option<bool>,
    /// `movesOwnership` (KataGo's format only).
    pub moves_ownership: Option<bool>,
    /// `pvVisits`.
    pub pv_visits: Option<bool>,
    /// `pvEdgeVisits` (KataGo's format only).
    pub pv_edge_visits: Option<bool>,
    /// `rootInfo` (KataGo's format only).
    pub root_info: Option<bool>,
    /// `avoid` and `allow` rules, in order.
    pub filters: Vec<Filter>,
}

/// An `avoid` or `allow` rule before the board places its vertices.
#[derive(Clone, Debug, PartialEq)]
pub struct Filter {
    /// `allow` rather than `avoid`.
    pub allow: bool,
    /// Whose moves.
    pub player: Player,
    /// The moves.
    pub vertices: Vec<Vertex>,
    /// For this many of the player's moves.
    pub until_depth: u32,
}

const INTERVAL_RANGE: &str = "interval must be between 0 and 1e7 centiseconds";

impl AnalyzeRequest {
    /// Reads the words of an analysis command in `format`.
    pub fn parse(format: Format, args: &[&str]) -> Result<AnalyzeRequest, String> {
        let mut r = AnalyzeRequest::default();
        let mut rest = args;
        if let Some(p) = rest.first().and_then(|w| w.parse::<Player>().ok()) {
            r.player = Some(p);
            rest = &rest[1..];
        }
        if let Some(cs) = rest.first().and_then(|w| w.parse::<f64>().ok()) {
            if !(0.0..=1e7).contains(&cs) {
                return Err(INTERVAL_RANGE.into());
            }
            r.interval = Some(cs);
            rest = &rest[1..];
        }
        while let Some(&key) = rest.first() {
            let take = |n: usize| -> Result<&[&str], String> {
                rest.get(1..=n)
                    .ok_or_else(|| format!("{key} needs {n} value(s)"))
            };
            let flag = |v: &str| match v {
                "true" | "1" => Ok(Some(true)),
                "false" | "0" => Ok(Some(false)),
                _ => Err(format!("{key} takes true or false, not {v:?}")),
            };
            let used = match key {
                "interval" => {
                    let v = take(1)?[0];
                    let cs: f64 = v.parse().map_err(|_| format!("bad interval {v:?}"))?;
                    if !(0.0..=1e7).contains(&cs) {
                        return Err(INTERVAL_RANGE.into());
                    }
                    r.interval = Some(cs);
                    2
                }
                "minmoves" | "maxmoves" => {
                    let v = take(1)?[0];
                    let n: usize = v.parse().map_err(|_| format!("bad {key} {v:?}"))?;
                    if key == "minmoves" {
                        r.min_moves = Some(n);
                    } else {
                        r.max_moves = Some(n);
                    }
                    2
                }
                "avoid" | "allow" => {
                    let v = take(3)?;
                    let player: Player = v[0]
                        .parse()
                        .map_err(|_| format!("bad {key} color {:?}", v[0]))?;
                    let vertices = v[1]
                        .split(',')
                        .filter(|m| !m.is_empty())
                        .map(|m| Vertex::parse(m).ok_or_else(|| format!("bad {key} vertex {m:?}")))
                        .collect::<Result<Vec<Vertex>, String>>()?;
                    let until_depth: u32 = v[2]
                        .parse()
                        .map_err(|_| format!("bad {key} depth {:?}", v[2]))?;
                    r.filters.push(Filter {
                        allow: key == "allow",
                        player,
                        vertices,
                        until_depth,
                    });
                    4
                }
                "ownership" | "ownershipStdev" | "movesOwnership" | "pvVisits" | "pvEdgeVisits"
                | "rootInfo"
                    if format == Format::Kata =>
                {
                    let b = flag(take(1)?[0])?;
                    match key {
                        "ownership" => r.ownership = b,
                        "ownershipStdev" => r.ownership_stdev = b,
                        "movesOwnership" => r.moves_ownership = b,
                        "pvVisits" => r.pv_visits = b,
                        "pvEdgeVisits" => r.pv_edge_visits = b,
                        _ => r.root_info = b,
                    }
                    2
                }
                "pvVisits" => {
                    r.pv_visits = flag(take(1)?[0])?;
                    2
                }
                other => return Err(format!("unknown analysis argument {other:?}")),
            };
            rest = &rest[used..];
        }
        Ok(r)
    }

    /// The arguments on a board of `size`, defaults filled in; an error names a vertex
    /// that is off this board.
    pub fn place(
        &self,
        format: Format,
        genmove: bool,
        size: BoardSize,
    ) -> Result<AnalyzeArgs, String> {
        let filters = self
            .filters
            .iter()
            .map(|f| {
                let key = if f.allow { "allow" } else { "avoid" };
                let moves = f
                    .vertices
                    .iter()
                    .map(|v| {
                        v.on(size)
                            .ok_or_else(|| format!("bad {key} vertex \"{v}\""))
                    })
                    .collect::<Result<Vec<Move>, String>>()?;
                Ok(FilterRule {
                    player: f.player,
                    moves,
                    until_depth: f.until_depth,
                    allow: f.allow,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let ownership_stdev = self.ownership_stdev.unwrap_or(false);
        Ok(AnalyzeArgs {
            format,
            player: self.player,
            interval: Duration::from_secs_f64(self.interval.unwrap_or(100.0) / 100.0),
            min_moves: self.min_moves.unwrap_or(0),
            max_moves: self.max_moves.unwrap_or(10_000),
            ownership: self.ownership.unwrap_or(false) || ownership_stdev,
            ownership_stdev,
            moves_ownership: self.moves_ownership.unwrap_or(false),
            pv_visits: self.pv_visits.unwrap_or(false),
            pv_edge_visits: self.pv_edge_visits.unwrap_or(false),
            root_info: self.root_info.unwrap_or(false),
            filters,
            genmove,
        })
    }
}

/// The words [`AnalyzeRequest::parse`] reads back as the same request (no leading space).
impl fmt::Display for AnalyzeRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut words: Vec<String> = Vec::new();
        words.extend(self.player.map(|p| p.letter().to_string()));
        if let Some(cs) = self.interval {
            words.push(format!("interval {cs}"));
        }
        let counts = [("minmoves", self.min_moves), ("maxmoves", self.max_moves)];
        for (key, n) in counts {
            words.extend(n.map(|n| format!("{key} {n}")));
        }
        let flags = [
            ("ownership", self.ownership),
            ("ownershipStdev", self.ownership_stdev),
            ("movesOwnership", self.moves_ownership),
            ("pvVisits", self.pv_visits),
            ("pvEdgeVisits", self.pv_edge_visits),
            ("rootInfo", self.root_info),
        ];
        for (key, b) in flags {
            words.extend(b.map(|b| format!("{key} {b}")));
        }
        for r in &self.filters {
            let list: Vec<String> = r.vertices.iter().map(Vertex::to_string).collect();
            words.push(format!(
                "{} {} {} {}",
                if r.allow { "allow" } else { "avoid" },
                r.player.letter(),
                // A lone comma is an empty list, which a bare space could not show.
                if list.is_empty() {
                    ",".into()
                } else {
                    list.join(",")
                },
                r.until_depth
            ));
        }
        f.write_str(&words.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_back_from_its_own_text() {
        let words = "w 50 maxmoves 5 ownershipStdev true avoid b d4,pass 2 allow w , 1 interval 7";
        let args: Vec<&str> = words.split(' ').collect();
        let r = AnalyzeRequest::parse(Format::Kata, &args).unwrap();
        assert_eq!(r.interval, Some(7.0), "the last interval counts");
        let text = r.to_string();
        let again: Vec<&str> = text.split(' ').collect();
        assert_eq!(
            AnalyzeRequest::parse(Format::Kata, &again),
            Ok(r.clone()),
            "{text}"
        );
        let nine = BoardSize::square(9).unwrap();
        let a = r.place(Format::Kata, false, nine).unwrap();
        assert!(a.ownership && a.ownership_stdev);
        assert_eq!(a.filters[0].moves.len(), 2);
        assert!(a.filters[1].moves.is_empty());
        // A vertex off the board at hand is refused when placed.
        let far = AnalyzeRequest::parse(Format::Lz, &["avoid", "b", "t19", "1"]).unwrap();
        assert_eq!(
            far.place(Format::Lz, false, nine).unwrap_err(),
            "bad avoid vertex \"T19\""
        );
        assert!(far
            .place(Format::Lz, false, BoardSize::square(19).unwrap())
            .is_ok());
    }
}
