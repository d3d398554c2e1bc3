//! Comparing Tengen's decoded outputs with KataGo's `kata-raw-nn` numbers, for the golden
//! tests of the shared networks and of the test networks.
// Each test crate uses its own subset of these helpers.
#![allow(dead_code)]

use std::collections::BTreeMap;

use serde_json::Value;
use tengen_nn::postprocess::NnOutput;

/// Tolerances of the acceptance criteria.
pub const PROB_TOL: f64 = 1e-4;
pub const SCORE_TOL: f64 = 1e-2;
pub const OWNERSHIP_TOL: f64 = 1e-3;
/// KataGo's GTP default `rootPolicyOptimism` (the b10c384 file's `outputDefaultOptimism`).
pub const GTP_OPTIMISM: f32 = 0.2;

/// Worst absolute error per output kind over a file.
#[derive(Default)]
pub struct Worst(BTreeMap<&'static str, f64>);

impl Worst {
    pub fn add(&mut self, kind: &'static str, err: f64) {
        let w = self.0.entry(kind).or_insert(0.0);
        *w = w.max(err);
    }

    pub fn line(&self) -> String {
        let parts: Vec<String> = self.0.iter().map(|(k, v)| format!("{k} {v:.2e}")).collect();
        parts.join(", ")
    }
}

/// How KataGo's numbers were written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// Full float32 (the shared files' `outputFullPrecision`).
    Full,
    /// As `kata-raw-nn` prints them: the short-term value error has 3 decimals, so half a
    /// unit of its last place is added to its tolerance (probabilities have 6, ownership 7).
    Printed,
}

/// Compares one output with KataGo's; returns the reasons it disagrees (empty if it agrees).
pub fn compare(
    ours: &NnOutput,
    expected: &Value,
    version: u32,
    precision: Precision,
    worst: &mut Worst,
) -> Vec<String> {
    let shortterm_value_tol = match precision {
        Precision::Full => PROB_TOL,
        Precision::Printed => PROB_TOL + 5e-4,
    };
    let mut bad = Vec::new();
    let mut check = |kind: &'static str, got: f64, want: f64, tol: f64| {
        let err = (got - want).abs();
        worst.add(kind, err);
        if err.is_nan() || err > tol {
            bad.push(format!("{kind}: {got} vs {want}"));
        }
    };
    let num = |k: &str| expected[k].as_f64().unwrap_or_else(|| panic!("{k}"));
    let policy = expected["policy"].as_array().expect("policy");
    assert_eq!(policy.len() + 1, ours.policy.len(), "policy length");
    let mut legal_mismatch = 0;
    for (p, want) in ours.policy.iter().zip(policy) {
        match want.as_f64() {
            Some(w) if *p >= 0.0 => check("policy", *p as f64, w, PROB_TOL),
            None if *p < 0.0 => {}
            _ => legal_mismatch += 1,
        }
    }
    check(
        "policy",
        ours.policy[policy.len()] as f64,
        num("policyPass"),
        PROB_TOL,
    );
    check("value", ours.white_win as f64, num("whiteWin"), PROB_TOL);
    check("value", ours.white_loss as f64, num("whiteLoss"), PROB_TOL);
    check("value", ours.no_result as f64, num("noResult"), PROB_TOL);
    let mean = ours.white_score_mean as f64;
    check("score", mean, num("whiteScoreSelfplay"), SCORE_TOL);
    check("lead", ours.white_lead as f64, num("whiteLead"), SCORE_TOL);
    // The mean square is compared through the stdev it implies, in points.
    let stdev = |sq: f64, m: f64| (sq - m * m).max(0.0).sqrt();
    let want_mean = num("whiteScoreSelfplay");
    check(
        "score stdev",
        stdev(ours.white_score_mean_sq as f64, mean),
        stdev(num("whiteScoreSelfplaySq"), want_mean),
        SCORE_TOL,
    );
    if version >= 9 {
        check(
            "short-term",
            ours.var_time_left as f64,
            num("varTimeLeft"),
            SCORE_TOL,
        );
        check(
            "short-term",
            ours.shortterm_winloss_error as f64,
            num("shorttermWinlossError"),
            shortterm_value_tol,
        );
        check(
            "short-term",
            ours.shortterm_score_error as f64,
            num("shorttermScoreError"),
            SCORE_TOL,
        );
    } else {
        // KataGo reports -1 for these before version 9.
        for k in [
            "varTimeLeft",
            "shorttermWinlossError",
            "shorttermScoreError",
        ] {
            assert_eq!(num(k), -1.0, "{k}");
        }
        assert_eq!(ours.var_time_left, -1.0);
    }
    let own = ours.white_ownership.as_ref().expect("ownership");
    for (o, w) in own
        .iter()
        .zip(expected["whiteOwnership"].as_array().expect("own"))
    {
        check(
            "ownership",
            *o as f64,
            w.as_f64().expect("number"),
            OWNERSHIP_TOL,
        );
    }
    if legal_mismatch > 0 {
        bad.push(format!("{legal_mismatch} points legal on one side only"));
    }
    bad
}
