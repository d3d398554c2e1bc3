//! The analysis commands' arguments and output lines: KataGo's `kata-analyze` and Leela
//! Zero's `lz-analyze` (also Sabaki's `analyze`), and their `genmove_analyze` forms.
//! Values are from the configured point of view (KataGo's `reportAnalysisWinratesAs`;
//! the side to move's by default, as KataGo's GTP reports them).

use std::fmt::Write as _;
use std::time::Duration;

use tengen_rules::{BoardSize, Player};
use tengen_search::{Analysis, FilterRule};

use super::analyze_request::AnalyzeRequest;
use crate::perspective::Perspective;

/// Which output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `kata-analyze`: floats, scores, utility, optional ownership and root info.
    Kata,
    /// `lz-analyze` and `analyze`: winrate, prior and lcb as integers out of 10000.
    Lz,
}

/// Parsed arguments of an analysis command.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalyzeArgs {
    /// Output format.
    pub format: Format,
    /// Whose move to analyse (default: the player to move).
    pub player: Option<Player>,
    /// Time between reports.
    pub interval: Duration,
    /// Report at least this many moves, visited or not.
    pub min_moves: usize,
    /// Report at most this many moves.
    pub max_moves: usize,
    /// Include root ownership.
    pub ownership: bool,
    /// Include root ownership stdev.
    pub ownership_stdev: bool,
    /// Include ownership after each move.
    pub moves_ownership: bool,
    /// Include the visits of each PV node.
    pub pv_visits: bool,
    /// Include the visits through each PV edge.
    pub pv_edge_visits: bool,
    /// Include root values.
    pub root_info: bool,
    /// Avoid/allow rules.
    pub filters: Vec<FilterRule>,
    /// True for the `genmove_analyze` forms, which end by playing a move.
    pub genmove: bool,
}

/// Parses `[player] [interval] [key value]...` as KataGo does (interval in centiseconds;
/// `avoid`/`allow` take a player, a comma-separated move list and a depth) for a board of
/// `size`.
pub fn parse_args(
    format: Format,
    genmove: bool,
    args: &[&str],
    size: BoardSize,
) -> Result<AnalyzeArgs, String> {
    AnalyzeRequest::parse(format, args)?.place(format, genmove, size)
}

/// Formats numbers as KataGo's streams do: up to 6 significant digits, no trailing zeros.
fn num(x: f64) -> String {
    if !x.is_finite() {
        return "0".into();
    }
    let s = format!("{:.*}", decimals(x), x);
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

fn decimals(x: f64) -> usize {
    let mag = if x == 0.0 {
        0
    } else {
        x.abs().log10().floor() as i32
    };
    (5 - mag).clamp(0, 10) as usize
}

/// Appends ` name v1 v2 ...` (each value through `f`) when there are values.
fn push_values(out: &mut String, name: &str, values: Option<&[f32]>, f: impl Fn(f64) -> f64) {
    if let Some(v) = values {
        let _ = write!(out, " {name}");
        for &x in v {
            let _ = write!(out, " {}", num(f(f64::from(x))));
        }
    }
}

/// One report line for `a` (no newline) with values in `view`, or `None` when there is
/// nothing to report yet.
pub fn format_line(a: &Analysis, args: &AnalyzeArgs, view: Perspective) -> Option<String> {
    let size = a.size;
    // The snapshot is in White's view.
    let flip = view.flips(a.root.current_player);
    let wr = |w: f64| if flip { 1.0 - w } else { w };
    let pts = |s: f64| if flip { -s } else { s };
    let moves: Vec<_> = a.moves.iter().take(args.max_moves).collect();
    if moves.is_empty() {
        return None;
    }
    let mut out = String::new();
    for (i, m) in moves.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let pv: Vec<String> = m.pv.iter().map(|&mv| size.gtp(mv)).collect();
        match args.format {
            Format::Lz => {
                let _ = write!(
                    out,
                    "info move {} visits {} winrate {} prior {} lcb {} order {} pv {}",
                    size.gtp(m.mv),
                    m.visits,
                    (wr(m.winrate) * 10000.0).round() as i64,
                    (m.prior * 10000.0).round() as i64,
                    (wr(m.lcb) * 10000.0).round() as i64,
                    m.order,
                    pv.join(" ")
                );
            }
            Format::Kata => {
                let _ = write!(
                    out,
                    "info move {} visits {} edgeVisits {} utility {} winrate {} scoreMean {} \
                     scoreStdev {} scoreLead {} scoreSelfplay {} prior {} lcb {} utilityLcb {} \
                     weight {} order {} pv {}",
                    size.gtp(m.mv),
                    m.visits,
                    m.edge_visits,
                    num(pts(m.utility)),
                    num(wr(m.winrate)),
                    num(pts(m.score_lead)),
                    num(m.score_stdev),
                    num(pts(m.score_lead)),
                    num(pts(m.score_selfplay)),
                    num(m.prior),
                    num(wr(m.lcb)),
                    num(pts(m.utility_lcb)),
                    m.visits,
                    m.order,
                    pv.join(" ")
                );
            }
        }
        let counts = [
            ("pvVisits", args.pv_visits, &m.pv_visits),
            ("pvEdgeVisits", args.pv_edge_visits, &m.pv_edge_visits),
        ];
        for (name, _, v) in counts.iter().filter(|c| c.1) {
            let v: Vec<String> = v.iter().map(u64::to_string).collect();
            let _ = write!(out, " {name} {}", v.join(" "));
        }
        if args.format == Format::Kata && args.moves_ownership {
            push_values(&mut out, "movesOwnership", m.ownership.as_deref(), pts);
        }
    }
    if args.format == Format::Kata {
        if args.root_info {
            let r = &a.root;
            let _ = write!(
                out,
                " rootInfo visits {} utility {} winrate {} scoreMean {} scoreStdev {} scoreLead {} \
                 scoreSelfplay {} weight {} rawStWrError {} rawStScoreError {} rawVarTimeLeft {}",
                r.visits,
                num(pts(r.utility)),
                num(wr(r.winrate)),
                num(pts(r.score_lead)),
                num(r.score_stdev),
                num(pts(r.score_lead)),
                num(pts(r.score_selfplay)),
                r.visits,
                num(r.raw_st_wr_error),
                num(r.raw_st_score_error),
                num(r.raw_var_time_left)
            );
        }
        if args.ownership {
            push_values(&mut out, "ownership", a.ownership.as_deref(), pts);
        }
        if args.ownership_stdev {
            push_values(
                &mut out,
                "ownershipStdev",
                a.ownership_stdev.as_deref(),
                |x| x,
            );
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse_as_katago_takes_them() {
        let size = BoardSize::square(19).unwrap();
        let a = parse_args(
            Format::Kata,
            false,
            &[
                "b",
                "50",
                "ownership",
                "true",
                "avoid",
                "w",
                "D4,Q16",
                "2",
                "maxmoves",
                "5",
            ],
            size,
        )
        .unwrap();
        assert_eq!(a.player, Some(Player::Black));
        assert_eq!(a.interval, Duration::from_millis(500));
        assert!(a.ownership);
        assert_eq!(a.max_moves, 5);
        assert_eq!(a.filters.len(), 1);
        assert_eq!(a.filters[0].moves.len(), 2);
        assert!(parse_args(Format::Kata, false, &["interval", "x"], size).is_err());
        assert!(parse_args(Format::Kata, false, &["avoid", "b"], size).is_err());
        assert!(parse_args(Format::Lz, false, &["ownership", "true"], size).is_err());
        assert!(parse_args(Format::Kata, false, &["-5"], size).is_err());
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(123.456789), "123.457");
        assert_eq!(num(1.0), "1");
        assert_eq!(num(0.000123456), "0.000123456");
    }
}
