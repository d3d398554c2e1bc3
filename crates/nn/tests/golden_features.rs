//! Input features against the reference data: KataGo's `fillRowV7` on the positions of
//! `katago-features-v7.jsonl` (exact-size and padded buffers), Pgx's observations in
//! `pgx-go.jsonl`; plus symmetry and ladder checks and a property test that features
//! commute with the board symmetries.

mod common;

use common::replay;
use proptest::prelude::*;
use serde_json::Value;
use tengen_nn::features::v7::{spatial, InputParams, V7Encoder, NUM_GLOBAL, NUM_SPATIAL};
use tengen_nn::features::{pgx_observation, LadderSearch, Layout, Symmetry, PGX_PLANES};
use tengen_rules::{Board, BoardSize, Game, Loc, Move, PgxGame, Player, Rules};
use tengen_test_support::{golden_line, golden_records};

// ---------------------------------------------------------------- reference data

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is a string"))
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number") as f32)
        .collect()
}

/// Features of `pla` to move with a `x_len`x`y_len` buffer.
fn features(
    enc: &mut V7Encoder,
    g: &Game,
    pla: Player,
    x_len: usize,
    y_len: usize,
) -> (Vec<f32>, Vec<f32>) {
    let mut s = vec![0.0; NUM_SPATIAL * x_len * y_len];
    let mut gl = vec![0.0; NUM_GLOBAL];
    enc.fill(
        g,
        pla,
        &InputParams::default(),
        x_len,
        y_len,
        &mut s,
        &mut gl,
    )
    .expect("features");
    (s, gl)
}

// ---------------------------------------------------------------- KataGo golden

#[test]
fn katago_features_v7_golden() {
    let Some(records) = golden_records("katago-features-v7.jsonl") else {
        return;
    };
    let mut enc = V7Encoder::new();
    let (mut agreed, mut worst_spatial, mut worst_global) = (0, 0f32, 0f32);
    let mut report = Vec::new();
    for r in &records {
        let id = str_of(r, "id");
        let (g, pla) = replay(r);
        let size = g.board().size();
        let (w, h) = (size.width(), size.height());
        let (sp, gl) = features(&mut enc, &g, pla, w, h);
        let want_sp = floats(&r["spatial"]);
        let want_gl = floats(&r["global"]);
        let mut problems = Vec::new();
        if want_sp.len() != sp.len() || want_gl.len() != gl.len() {
            problems.push(format!(
                "lengths: ours {}/{}, reference {}/{}",
                sp.len(),
                gl.len(),
                want_sp.len(),
                want_gl.len()
            ));
        } else {
            for (i, (&a, &b)) in sp.iter().zip(&want_sp).enumerate() {
                worst_spatial = worst_spatial.max((a - b).abs());
                if a != b {
                    let (c, p) = (i / (w * h), i % (w * h));
                    problems.push(format!(
                        "spatial channel {c} at {}: ours {a}, KataGo {b}",
                        size.gtp(Move::Play(size.loc_at_index(p).expect("point")))
                    ));
                }
            }
            for (i, (&a, &b)) in gl.iter().zip(&want_gl).enumerate() {
                worst_global = worst_global.max((a - b).abs());
                if (a - b).abs() > 1e-6 {
                    problems.push(format!("global {i}: ours {a}, KataGo {b}"));
                }
            }
        }
        // The same position in a larger buffer: the board in the top-left corner, the rest 0.
        let (px, py) = (w.max(18) + 1, h.max(18) + 1);
        let (psp, pgl) = features(&mut enc, &g, pla, px, py);
        if pgl != gl {
            problems.push(format!("{px}x{py} buffer: globals differ"));
        }
        for c in 0..NUM_SPATIAL {
            for y in 0..py {
                for x in 0..px {
                    let v = psp[c * px * py + y * px + x];
                    let want = if x < w && y < h {
                        sp[c * w * h + y * w + x]
                    } else {
                        0.0
                    };
                    if v != want {
                        problems.push(format!(
                            "{px}x{py} buffer: channel {c} at ({x},{y}) is {v}, expected {want}"
                        ));
                    }
                }
            }
        }
        if problems.is_empty() {
            agreed += 1;
        } else {
            report.push((id.to_string(), problems));
        }
    }
    println!(
        "{}",
        golden_line("katago-features-v7.jsonl", agreed, records.len())
    );
    println!("  worst error: spatial {worst_spatial:e}, global {worst_global:e}");
    for (id, problems) in report.iter().take(10) {
        for p in problems.iter().take(8) {
            println!("  {id}: {p}");
        }
    }
    assert_eq!(
        agreed,
        records.len(),
        "every position must agree with KataGo"
    );
}

// ---------------------------------------------------------------- Pgx golden

#[test]
fn pgx_observations_golden() {
    let Some(records) = golden_records("pgx-go.jsonl") else {
        return;
    };
    let (mut agreed, mut total) = (0, 0);
    let mut report = Vec::new();
    for r in &records {
        let id = str_of(r, "id");
        let n = r["size"].as_u64().expect("size") as usize;
        let size = BoardSize::square(n).expect("size");
        let order: Vec<u64> = r["player_order"]
            .as_array()
            .expect("order")
            .iter()
            .map(|v| v.as_u64().expect("id"))
            .collect();
        let colour_of = |pid: u64| {
            if order[0] == pid {
                Player::Black
            } else {
                Player::White
            }
        };
        let samples = r["observation_samples"].as_array().expect("samples");
        let actions = r["actions"].as_array().expect("actions");
        let mut g = PgxGame::new(size, r["komi"].as_f64().expect("komi") as f32);
        let mut obs = vec![0.0; n * n * PGX_PLANES];
        for step in 0..=actions.len() {
            for s in samples
                .iter()
                .filter(|s| s["step"].as_u64() == Some(step as u64))
            {
                total += 1;
                let observer = colour_of(s["player_id"].as_u64().expect("player"));
                pgx_observation(&g, observer, Layout::ChannelsFirst, &mut obs).expect("obs");
                let ours: Vec<String> = obs
                    .chunks(n * n)
                    .map(|p| {
                        p.iter()
                            .map(|&v| if v == 1.0 { '1' } else { '0' })
                            .collect()
                    })
                    .collect();
                let theirs: Vec<String> = s["planes"]
                    .as_array()
                    .expect("planes")
                    .iter()
                    .map(|p| p.as_str().expect("plane").to_string())
                    .collect();
                if ours == theirs {
                    agreed += 1;
                } else {
                    let bad: Vec<usize> = (0..PGX_PLANES)
                        .filter(|&j| ours.get(j) != theirs.get(j))
                        .collect();
                    report.push(format!("{id} step {step}: planes {bad:?} differ"));
                }
            }
            if let Some(a) = actions.get(step) {
                let a = a.as_u64().expect("action") as usize;
                let mv = size.loc_at_index(a).map_or(Move::Pass, Move::Play);
                g.step(mv).expect("golden action");
            }
        }
    }
    println!(
        "{}",
        golden_line("pgx-go.jsonl (observations)", agreed, total)
    );
    for p in report.iter().take(10) {
        println!("  {p}");
    }
    assert_eq!(agreed, total, "every Pgx observation must agree");
}

#[test]
fn pgx_layouts_agree() {
    let size = BoardSize::square(5).expect("size");
    let mut g = PgxGame::new(size, 7.5);
    for m in ["C3", "D4", "pass", "B2"] {
        g.step(size.parse_move(m).expect("move")).expect("legal");
    }
    let mut first = vec![0.0; 25 * PGX_PLANES];
    let mut last = vec![0.0; 25 * PGX_PLANES];
    pgx_observation(&g, Player::White, Layout::ChannelsFirst, &mut first).expect("obs");
    pgx_observation(&g, Player::White, Layout::ChannelsLast, &mut last).expect("obs");
    for p in 0..25 {
        for c in 0..PGX_PLANES {
            assert_eq!(first[c * 25 + p], last[p * PGX_PLANES + c]);
        }
    }
    assert!(pgx_observation(&g, Player::White, Layout::ChannelsLast, &mut last[1..]).is_err());
}

// ---------------------------------------------------------------- symmetries

/// A game replayed under a symmetry: every move (and handicap stone) mapped.
fn symmetric_game(size: BoardSize, rules: Rules, moves: &[(Player, Move)], s: Symmetry) -> Game {
    let mut g = Game::new(s.board_size(size), rules);
    for &(p, mv) in moves {
        let m = s.map_move(size, mv).expect("move of this board");
        g.play_tolerant(p, m).expect("symmetric move is legal");
    }
    g
}

/// Plays random legal moves (passes now and then) until `n` turns or the end of the game.
fn random_game(size: BoardSize, rules: Rules, n: usize, seed: u64) -> Vec<(Player, Move)> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut g = Game::new(size, rules);
    let mut moves = Vec::new();
    for _ in 0..n {
        if g.is_over() || g.past_normal_phase_end() {
            break;
        }
        let legal = g.legal_moves();
        let mv = if rng.u8(..20) == 0 {
            Move::Pass
        } else {
            legal[rng.usize(..legal.len())]
        };
        moves.push((g.to_move(), mv));
        g.play(mv).expect("legal move");
    }
    moves
}

const PRESETS: [&str; 8] = [
    "tromp-taylor",
    "chinese",
    "japanese",
    "aga",
    "aga-button",
    "stone-scoring",
    "new-zealand",
    "ancient-territory",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Features of the symmetric game equal the symmetric transform of the features.
    #[test]
    fn features_commute_with_symmetries(
        n in 3usize..=13, seed: u64, preset in 0..PRESETS.len(), sym in 0u8..8,
        turns in 0usize..200, pad in 0usize..3, white_view: bool
    ) {
        let size = BoardSize::square(n).expect("size");
        let rules = Rules::parse(PRESETS[preset]).expect("preset");
        let moves = random_game(size, rules, turns, seed);
        let s = Symmetry::new(sym).expect("symmetry");
        let g = symmetric_game(size, rules, &moves, Symmetry::IDENTITY);
        let gs = symmetric_game(size, rules, &moves, s);
        let pla = if white_view { Player::White } else { g.to_move() };
        // The symmetry of a padded buffer moves the board, so compare on the board's own size,
        // and check the padded buffer separately below.
        let mut enc = V7Encoder::new();
        let (sp, gl) = features(&mut enc, &g, pla, n, n);
        let (sps, gls) = features(&mut enc, &gs, pla, n, n);
        let mut mapped = vec![0.0; sp.len()];
        s.apply_planes(&sp, &mut mapped, NUM_SPATIAL, n, n).expect("square");
        for c in 0..NUM_SPATIAL {
            let (a, b) = (&mapped[c * n * n..][..n * n], &sps[c * n * n..][..n * n]);
            prop_assert_eq!(a, b, "channel {} under symmetry {}", c, s);
        }
        prop_assert_eq!(&gl, &gls);
        // Undoing the symmetry on the symmetric game's planes gives the original ones.
        let mut back = vec![0.0; sp.len()];
        s.unapply_planes(&sps, &mut back, NUM_SPATIAL, n, n).expect("square");
        prop_assert_eq!(&back, &sp);
        // A padded buffer holds the same planes in its top-left corner.
        let p = n + pad;
        let (psp, pgl) = features(&mut enc, &g, pla, p, p);
        prop_assert_eq!(&pgl, &gls);
        for c in 0..NUM_SPATIAL {
            for y in 0..p {
                for x in 0..p {
                    let want = if x < n && y < n { sp[c * n * n + y * n + x] } else { 0.0 };
                    prop_assert_eq!(psp[c * p * p + y * p + x], want);
                }
            }
        }
    }

    /// Applying a symmetry and then undoing it is the identity, on any buffer shape it allows.
    #[test]
    fn symmetry_round_trip(w in 1usize..8, h in 1usize..8, c in 1usize..4, sym in 0u8..8, seed: u64) {
        let s = Symmetry::new(sym).expect("symmetry");
        let mut rng = fastrand::Rng::with_seed(seed);
        let src: Vec<f32> = (0..c * w * h).map(|_| rng.f32()).collect();
        let mut out = vec![0.0; src.len()];
        let mut back = vec![0.0; src.len()];
        let r = s.apply_planes(&src, &mut out, c, w, h);
        prop_assert_eq!(r.is_ok(), s.keeps_shape(w, h));
        if r.is_ok() {
            s.unapply_planes(&out, &mut back, c, w, h).expect("same shape");
            prop_assert_eq!(&back, &src);
            // The inverse symmetry applied forward undoes it too.
            s.inverse().apply_planes(&out, &mut back, c, w, h).expect("same shape");
            prop_assert_eq!(&back, &src);
        }
    }
}

// ---------------------------------------------------------------- ladders

fn board(rows: &[&str]) -> Board {
    let size = BoardSize::new(rows[0].len(), rows.len()).expect("size");
    Board::from_rows(size, rows).expect("diagram")
}

fn at(b: &Board, v: &str) -> Loc {
    b.size().parse_loc(v).expect("vertex")
}

/// White C3 in atari (liberty D3), Black B3, C4, C2, D2: every extension leaves two
/// liberties, so the ladder runs diagonally to the top-right corner and dies there.
const LADDER_ATARI: [&str; 9] = [
    ".........", //
    ".........", //
    ".........", //
    ".........", //
    ".........", //
    "..X......", //
    ".XO......", //
    "..XX.....", //
    ".........",
];

/// The same with a white breaker on the ladder's path at G7.
const LADDER_BROKEN: [&str; 9] = [
    ".........", //
    ".........", //
    "......O..", //
    ".........", //
    ".........", //
    "..X......", //
    ".XO......", //
    "..XX.....", //
    ".........",
];

/// White C3 with two liberties (C4, D3): Black's atari at C4 starts the ladder above,
/// the atari at D3 lets White out at C4.
const LADDER_TWO_LIBS: [&str; 9] = [
    ".........", //
    ".........", //
    ".........", //
    ".........", //
    ".........", //
    ".........", //
    ".XO......", //
    "..XX.....", //
    ".........",
];

#[test]
fn ladder_in_atari_is_captured() {
    let b = board(&LADDER_ATARI);
    let mut ls = LadderSearch::new();
    let c3 = at(&b, "C3");
    assert_eq!(b.liberties(c3), 1);
    assert!(ls.is_captured(&b, c3));
    // Not a ladder question for chains with more liberties, nor for empty points.
    assert!(!ls.is_captured(&b, at(&b, "C4")));
    assert!(!ls.is_captured(&b, at(&b, "E5")));
}

#[test]
fn ladder_breaker_saves_the_stone() {
    let b = board(&LADDER_BROKEN);
    let mut ls = LadderSearch::new();
    assert!(!ls.is_captured(&b, at(&b, "C3")));
    let b2 = board(&LADDER_TWO_LIBS);
    let mut with_breaker = b2.clone();
    let g7 = at(&b2, "G7");
    with_breaker
        .set_stones(&[(g7, Some(Player::White))])
        .expect("placement");
    assert!(ls.working_ataris(&with_breaker, at(&b2, "C3")).is_empty());
}

#[test]
fn two_liberty_chain_has_one_working_atari() {
    let b = board(&LADDER_TWO_LIBS);
    let mut ls = LadderSearch::new();
    let c3 = at(&b, "C3");
    assert_eq!(ls.working_ataris(&b, c3), &[at(&b, "C4")]);
    // Black B3 has three liberties: nothing to read.
    assert!(ls.working_ataris(&b, at(&b, "B3")).is_empty());
}

/// Spatial plane `c` of the v7 features of `b` with `pla` to move, as a set of points.
fn plane_points(b: &Board, pla: Player, c: usize) -> Vec<String> {
    let g = Game::from_position(b.clone(), pla, Rules::chinese(), Default::default());
    let size = b.size();
    let (w, h) = (size.width(), size.height());
    let (sp, _) = features(&mut V7Encoder::new(), &g, pla, w, h);
    (0..w * h)
        .filter(|&i| sp[c * w * h + i] == 1.0)
        .map(|i| size.gtp(Move::Play(size.loc_at_index(i).expect("point"))))
        .collect()
}

#[test]
fn ladder_features() {
    // In atari and laddered: the stone is marked whoever is to move; no working moves
    // (those are only for two-liberty chains).
    let atari = board(&LADDER_ATARI);
    for pla in Player::BOTH {
        assert_eq!(plane_points(&atari, pla, spatial::LADDERED), ["C3"]);
        assert!(plane_points(&atari, pla, spatial::LADDER_WORKING_MOVES).is_empty());
    }
    assert!(plane_points(&board(&LADDER_BROKEN), Player::Black, spatial::LADDERED).is_empty());
    // Two liberties: the attacker to move sees its working atari.
    let two = board(&LADDER_TWO_LIBS);
    assert_eq!(plane_points(&two, Player::Black, spatial::LADDERED), ["C3"]);
    assert_eq!(
        plane_points(&two, Player::Black, spatial::LADDER_WORKING_MOVES),
        ["C4"]
    );
    assert!(plane_points(&two, Player::White, spatial::LADDER_WORKING_MOVES).is_empty());
}

#[test]
fn ladder_features_follow_symmetries() {
    for diagram in [&LADDER_ATARI, &LADDER_BROKEN, &LADDER_TWO_LIBS] {
        let b = board(diagram);
        let size = b.size();
        let n = size.width();
        let g = Game::from_position(
            b.clone(),
            Player::Black,
            Rules::chinese(),
            Default::default(),
        );
        let (sp, _) = features(&mut V7Encoder::new(), &g, Player::Black, n, n);
        for s in Symmetry::ALL {
            let mut placed = Vec::new();
            for l in size.points() {
                if let Some(p) = b.stone(l) {
                    placed.push((s.map_loc(size, l).expect("point"), Some(p)));
                }
            }
            let mut sb = Board::new(s.board_size(size));
            sb.set_stones(&placed).expect("symmetric diagram");
            let sg = Game::from_position(sb, Player::Black, Rules::chinese(), Default::default());
            let (ssp, _) = features(&mut V7Encoder::new(), &sg, Player::Black, n, n);
            let mut mapped = vec![0.0; sp.len()];
            s.apply_planes(&sp, &mut mapped, NUM_SPATIAL, n, n)
                .expect("square");
            for c in [
                spatial::LADDERED,
                spatial::LADDERED_PREV_1,
                spatial::LADDERED_PREV_2,
                spatial::LADDER_WORKING_MOVES,
            ] {
                assert_eq!(
                    &mapped[c * n * n..][..n * n],
                    &ssp[c * n * n..][..n * n],
                    "channel {c} under symmetry {s}"
                );
            }
        }
    }
}

#[test]
fn bad_buffers_are_errors() {
    let g = Game::new(BoardSize::square(9).expect("size"), Rules::chinese());
    let mut enc = V7Encoder::new();
    let p = InputParams::default();
    let mut gl = vec![0.0; NUM_GLOBAL];
    let mut small = vec![0.0; NUM_SPATIAL * 8 * 9];
    assert!(enc
        .fill(&g, Player::Black, &p, 8, 9, &mut small, &mut gl)
        .is_err());
    let mut sp = vec![0.0; NUM_SPATIAL * 81];
    assert!(enc
        .fill(&g, Player::Black, &p, 9, 9, &mut sp[1..], &mut gl)
        .is_err());
    assert!(enc
        .fill(&g, Player::Black, &p, 9, 9, &mut sp, &mut gl[1..])
        .is_err());
    assert!(enc
        .fill(&g, Player::Black, &p, 9, 9, &mut sp, &mut gl)
        .is_ok());
}
