//! Go game records: a node tree's main line as a `Game`, and a `Game` as a tree.

use super::*;
use crate::board::Board;
use crate::game::{Game, GameOptions};
use crate::geometry::{BoardSize, Loc, Move};
use crate::rules::{komi_is_valid, Rules};

/// A comment (`C`) on a main-line node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeComment {
    /// Main-line node number (0 is the root).
    pub node: usize,
    /// How many of the game's turns have been played at this node (0 for nodes before a setup restart).
    pub turns: usize,
    /// The comment text.
    pub text: String,
}

/// A Go game read from SGF: the main line replayed as a [`Game`], with what the record says about it.
#[derive(Clone, Debug)]
pub struct SgfGame {
    /// The main line as a game (see the module docs for how it is replayed).
    pub game: Game,
    /// `HA`, the number of handicap stones, if given.
    pub handicap: Option<u32>,
    /// Comments along the main line.
    pub comments: Vec<NodeComment>,
    /// `RE`, the result as written.
    pub result: Option<String>,
    /// What was tolerated while reading.
    pub warnings: Vec<SgfWarning>,
    /// The game tree it was read from, variations included.
    pub tree: GameTree,
}

/// Reads the first game tree of an SGF text as a Go game.
pub fn load(text: &str) -> Result<SgfGame, SgfError> {
    let tree = parse(text)?.into_iter().next().ok_or(SgfError {
        offset: 0,
        kind: SgfErrorKind::NoGameTree,
    })?;
    SgfGame::from_tree(tree)
}

/// Writes a game as SGF FF\[4\]: setup and rules in the root, then one node per move.
pub fn save(game: &Game) -> String {
    write(&[game_to_tree(game)])
}

/// Rules from an `RU` value: anything [`Rules::parse`] reads (KataGo presets, JSON,
/// compact form), or a common SGF name such as `JP`, `Chinese rules`, `Ing`, `NZ`.
pub fn rules_from_name(name: &str) -> Option<Rules> {
    if let Ok(r) = Rules::parse(name) {
        return Some(r);
    }
    let key: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    let key = key
        .strip_suffix("rules")
        .or_else(|| key.strip_suffix("rule"))
        .unwrap_or(&key);
    let preset = match key {
        "jp" | "jpn" | "japan" | "japanese" => "japanese",
        "cn" | "chn" | "china" | "chinese" => "chinese",
        "kr" | "kor" | "korea" | "korean" => "korean",
        "aga" | "american" => "aga",
        "goe" | "ing" | "inggoe" => "goe",
        "nz" | "newzealand" => "new-zealand",
        "tt" | "tromp" | "tromptaylor" => "tromp-taylor",
        "bga" | "british" => "bga",
        "french" | "ffg" => "french",
        _ => return None,
    };
    Rules::preset(preset)
}

impl SgfGame {
    /// Replays a game tree's main line (see the module docs).
    pub fn from_tree(tree: GameTree) -> Result<SgfGame, SgfError> {
        let root = tree.root();
        let root_offset = root.offset().unwrap_or(0);
        let mut warnings = Vec::new();

        if let Some(gm) = root.get("GM") {
            if gm.trim() != "1" {
                return Err(SgfError {
                    offset: root_offset,
                    kind: SgfErrorKind::NotGo(gm.to_string()),
                });
            }
        }
        let size = match root.get("SZ") {
            None => BoardSize::default(),
            Some(v) => parse_size(v).ok_or_else(|| SgfError {
                offset: root_offset,
                kind: SgfErrorKind::BadSize(v.to_string()),
            })?,
        };
        let mut rules = match root.get("RU") {
            None => Rules::default(),
            Some(ru) => rules_from_name(ru).unwrap_or_else(|| {
                warnings.push(SgfWarning::UnknownRules(ru.to_string()));
                Rules::default()
            }),
        };
        if let Some(km) = root.get("KM") {
            match km.trim().parse::<f64>() {
                Ok(k) if komi_is_valid(k) => rules.komi = k as f32,
                _ => warnings.push(SgfWarning::BadKomi(km.to_string())),
            }
        }
        let handicap = root.get("HA").and_then(|v| match v.trim().parse::<u32>() {
            Ok(n) => Some(n),
            Err(_) => {
                warnings.push(SgfWarning::BadHandicap(v.to_string()));
                None
            }
        });

        let nodes: Vec<Node<'_>> = tree.main_line().collect();

        // The initial position from the root's setup.
        let mut board = Board::new(size);
        board
            .set_stones(&setup_placements(size, root, 0)?)
            .map_err(|reason| SgfError {
                offset: root_offset,
                kind: SgfErrorKind::BadSetup { node: 0, reason },
            })?;
        let black_only =
            board.num_stones(Player::White) == 0 && board.num_stones(Player::Black) > 0;
        let handicap_setup = black_only && handicap.unwrap_or(0) >= 2;
        let to_move = player_to_move(root, 0, &mut warnings)
            .or_else(|| first_mover(&nodes))
            .unwrap_or(if handicap_setup {
                Player::White
            } else {
                Player::Black
            });
        let stones = board.num_stones(Player::Black) as u32;
        let mut game = Game::from_position(board, to_move, rules, GameOptions::default());
        if black_only && stones >= 2 && to_move == Player::White {
            // As GTP's handicap placement counts it.
            game.set_initial_turn_number(stones);
        }

        let mut comments: Vec<NodeComment> = Vec::new();
        for (i, &node) in nodes.iter().enumerate() {
            let offset = node.offset().unwrap_or(0);
            if i > 0 && is_setup_node(node) {
                let mut board = game.board().clone();
                board
                    .set_stones(&setup_placements(size, node, i)?)
                    .map_err(|reason| SgfError {
                        offset,
                        kind: SgfErrorKind::BadSetup { node: i, reason },
                    })?;
                let to_move = player_to_move(node, i, &mut warnings)
                    .or_else(|| first_mover(nodes.get(i..).unwrap_or_default()))
                    .unwrap_or(game.to_move());
                warnings.push(SgfWarning::SetupRestart {
                    node: i,
                    dropped_turns: game.turns().len(),
                });
                for c in &mut comments {
                    c.turns = 0;
                }
                game = Game::from_position(board, to_move, *game.rules(), *game.options());
            }
            for p in node.properties() {
                let player = match p.id() {
                    "B" => Player::Black,
                    "W" => Player::White,
                    _ => continue,
                };
                let [value] = p.values() else {
                    return Err(SgfError {
                        offset,
                        kind: SgfErrorKind::BadMove {
                            node: i,
                            property: p.id().to_string(),
                            values: p.values().len(),
                        },
                    });
                };
                let mv = size.parse_sgf(value.trim()).map_err(|reason| SgfError {
                    offset,
                    kind: SgfErrorKind::BadPoint {
                        node: i,
                        property: p.id().to_string(),
                        value: value.clone(),
                        reason,
                    },
                })?;
                game.play_tolerant(player, mv).map_err(|reason| SgfError {
                    offset,
                    kind: SgfErrorKind::IllegalMove {
                        node: i,
                        player,
                        property: p.id().to_string(),
                        value: value.clone(),
                        reason,
                    },
                })?;
            }
            if node.has("C") {
                comments.push(NodeComment {
                    node: i,
                    turns: game.turns().len(),
                    text: node.values("C").join("\n"),
                });
            }
        }

        let result = root.get("RE").map(str::to_string);
        if let (Some(winner), None) = (
            result.as_deref().and_then(resignation_winner),
            game.outcome(),
        ) {
            game.resign(winner.opp());
        }
        drop(nodes); // its borrow of `tree` ends before `tree` moves into the record
        Ok(SgfGame {
            game,
            handicap,
            comments,
            result,
            warnings,
            tree,
        })
    }
}

/// `SZ[19]` or `SZ[columns:rows]`.
fn parse_size(v: &str) -> Option<BoardSize> {
    let num = |s: &str| s.trim().parse::<usize>().ok();
    let (x, y) = match v.split_once(':') {
        Some((a, b)) => (num(a)?, num(b)?),
        None => {
            let n = num(v)?;
            (n, n)
        }
    };
    BoardSize::new(x, y).ok()
}

fn is_setup_node(node: Node<'_>) -> bool {
    node.properties()
        .iter()
        .any(|p| matches!(p.id(), "AB" | "AW" | "AE"))
}

/// The node's `AB`/`AW`/`AE` as placements, in the order written (later ones win).
fn setup_placements(
    size: BoardSize,
    node: Node<'_>,
    index: usize,
) -> Result<Vec<(Loc, Option<Player>)>, SgfError> {
    let mut out = Vec::new();
    for p in node.properties() {
        let stone = match p.id() {
            "AB" => Some(Player::Black),
            "AW" => Some(Player::White),
            "AE" => None,
            _ => continue,
        };
        for v in p.values() {
            let points = point_list(size, v).map_err(|reason| SgfError {
                offset: node.offset().unwrap_or(0),
                kind: SgfErrorKind::BadPoint {
                    node: index,
                    property: p.id().to_string(),
                    value: v.clone(),
                    reason,
                },
            })?;
            out.extend(points.into_iter().map(|l| (l, stone)));
        }
    }
    Ok(out)
}

/// One point-list value: a point, or a compressed rectangle `aa:cc` (corners in any order).
/// An empty value adds nothing.
fn point_list(size: BoardSize, value: &str) -> Result<Vec<Loc>, CoordError> {
    let value = value.trim();
    if value.is_empty() {
        return Ok(Vec::new());
    }
    let point = |s: &str| match size.parse_sgf(s)? {
        Move::Play(l) => Ok(size.xy(l)),
        Move::Pass => Err(CoordError::Syntax(s.to_string())),
    };
    let (a, b) = match value.split_once(':') {
        Some((a, b)) => (point(a)?, point(b)?),
        None => {
            let p = point(value)?;
            (p, p)
        }
    };
    let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
    let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
    Ok((y0..=y1)
        .flat_map(|y| (x0..=x1).filter_map(move |x| size.loc(x, y)))
        .collect())
}

/// `PL` of a node, if present and readable.
fn player_to_move(node: Node<'_>, index: usize, warnings: &mut Vec<SgfWarning>) -> Option<Player> {
    let v = node.get("PL")?;
    match v.parse::<Player>() {
        Ok(p) => Some(p),
        Err(_) => {
            warnings.push(SgfWarning::BadPlayer {
                node: index,
                value: v.to_string(),
            });
            None
        }
    }
}

/// Colour of the first move from `nodes[0]` on, before any later setup node.
fn first_mover(nodes: &[Node<'_>]) -> Option<Player> {
    for (k, node) in nodes.iter().enumerate() {
        if k > 0 && is_setup_node(*node) {
            return None;
        }
        for p in node.properties() {
            match p.id() {
                "B" => return Some(Player::Black),
                "W" => return Some(Player::White),
                _ => {}
            }
        }
    }
    None
}

/// The winner of `B+R`, `W+Resign` and the like.
pub(super) fn resignation_winner(result: &str) -> Option<Player> {
    let r = result.trim().to_ascii_uppercase();
    let (winner, how) = if let Some(rest) = r.strip_prefix("B+") {
        (Player::Black, rest)
    } else {
        (Player::White, r.strip_prefix("W+")?)
    };
    (how == "R" || how == "RESIGN").then_some(winner)
}

pub(super) fn game_to_tree(game: &Game) -> GameTree {
    let board = game.initial_board();
    let size = board.size();
    let rules = game.rules();
    let mut root = vec![
        Property::one("FF", "4"),
        Property::one("GM", "1"),
        Property::one("CA", "UTF-8"),
        Property::one("AP", format!("Tengen:{}", env!("CARGO_PKG_VERSION"))),
        Property::one(
            "SZ",
            if size.width() == size.height() {
                size.width().to_string()
            } else {
                format!("{}:{}", size.width(), size.height())
            },
        ),
        Property::one("KM", rules.komi.to_string()),
        // Komi is in KM, so the compact form leaves it out (as KataGo's records do).
        Property::one(
            "RU",
            rules
                .nice_name()
                .map_or_else(|| rules.compact_no_komi(), str::to_string),
        ),
    ];
    let stones = |p: Player| -> Vec<String> {
        size.points()
            .filter(|&l| board.stone(l) == Some(p))
            .map(|l| size.sgf(Move::Play(l)))
            .collect()
    };
    let (black, white) = (stones(Player::Black), stones(Player::White));
    // What Game counts as handicap: two or more Black stones and no White ones.
    let handicap = white.is_empty() && black.len() >= 2;
    if handicap {
        root.push(Property::one("HA", black.len().to_string()));
    }
    if !black.is_empty() {
        root.push(Property {
            id: "AB".to_string(),
            values: black,
        });
    }
    if !white.is_empty() {
        root.push(Property {
            id: "AW".to_string(),
            values: white,
        });
    }
    // Only when load's rule for a missing PL would pick someone else.
    let default = game
        .turns()
        .first()
        .map(|t| t.player)
        .unwrap_or(if handicap {
            Player::White
        } else {
            Player::Black
        });
    if game.initial_player() != default {
        root.push(Property::one(
            "PL",
            game.initial_player().letter().to_string(),
        ));
    }
    if let Some(o) = game.outcome() {
        root.push(Property::one("RE", o.sgf_result()));
    }
    let mut tree = GameTree::new(root);
    let mut parent = NodeId(0);
    for t in game.turns() {
        let id = match t.player {
            Player::Black => "B",
            Player::White => "W",
        };
        if let Some(child) = tree.add_child(parent, vec![Property::one(id, size.sgf(t.mv))]) {
            parent = child;
        }
    }
    tree
}
