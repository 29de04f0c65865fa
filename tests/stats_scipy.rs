//! `score::stats` against scipy on the same inputs: the datasets are built
//! here, written to JSON, and a Python script computes the reference with
//! scipy (Mann–Whitney, Welch, MAD) and numpy (median, Hodges–Lehmann,
//! modified z), and Holm in plain Python (statsmodels is not a dependency).
//! Without python3 or scipy the test says what is missing and skips.

use std::process::Command;

use rocegate::score::stats;
use serde_json::{json, Value};

/// Computes the reference for every case in `argv[1]`; prints one JSON
/// document. Chooses scipy's method the way `stats::mann_whitney` does, from
/// its own look at the data, so a disagreement on ties shows up as a
/// disagreement on `exact`.
const SCRIPT: &str = r#"
import json, sys
import numpy as np
import scipy
from scipy import stats

def num(x):
    x = float(x)
    return None if x != x else x

def holm(p):
    # statsmodels.stats.multitest.multipletests(p, method='holm')[1]
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for k, i in enumerate(order):
        running = min(1.0, max(running, p[i] * (m - k)))
        out[i] = running
    return out

data = json.load(open(sys.argv[1]))
cases = []
for c in data["cases"]:
    a, b = c["a"], c["b"]
    ties = len(set(a + b)) < len(a) + len(b)
    exact = not ties and len(a) <= 50 and len(b) <= 50
    mw = stats.mannwhitneyu(a, b, alternative="two-sided",
                            method="exact" if exact else "asymptotic")
    welch = None
    constant = lambda v: min(v) == max(v)
    if len(a) >= 2 and len(b) >= 2 and not (constant(a) and constant(b)):
        r = stats.ttest_ind(a, b, equal_var=False)
        va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
        df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
        welch = {"t": num(r.statistic), "df": num(df), "p": num(r.pvalue)}
    med = float(np.median(a))
    mad = float(stats.median_abs_deviation(a, scale=1.0))
    scale = max(mad, 0.005 * abs(med))
    mz = [0.0 if scale == 0 else 0.6745 * (x - med) / scale for x in a]
    cases.append({
        "u": num(mw.statistic), "p": num(mw.pvalue), "exact": exact, "ties": ties,
        "welch": welch, "median": med, "mad": mad,
        "hl": float(np.median(np.subtract.outer(a, b))), "mz": mz,
    })
print(json.dumps({"scipy": scipy.__version__, "cases": cases,
                  "holm": [holm(p) for p in data["holm"]]}))
"#;

/// A Python 3 with scipy ≥ 1.7 (the first with `method=` in
/// `mannwhitneyu`), or why there is none. `python3` on PATH comes first;
/// Debian's own is tried next because a pyenv or virtualenv `python3`
/// ahead of it on PATH does not see the `python3-scipy` package.
fn python_with_scipy() -> Result<String, String> {
    const PROBE: &str = "import scipy; print(scipy.__version__)";
    let mut why = Vec::new();
    for py in ["python3", "/usr/bin/python3"] {
        let out = match Command::new(py).args(["-c", PROBE]).output() {
            Ok(o) => o,
            Err(e) => {
                why.push(format!("{py} is not installed ({e})"));
                continue;
            }
        };
        if !out.status.success() {
            why.push(format!("{py} has no scipy"));
            continue;
        }
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let mut parts = version.split('.').map(|s| s.parse::<u32>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        if (major, minor) < (1, 7) {
            why.push(format!("{py} has scipy {version}, older than 1.7"));
            continue;
        }
        return Ok(py.to_string());
    }
    Err(format!("{}: apt-get install python3-scipy", why.join("; ")))
}

/// xorshift64: the same datasets on every run and every machine.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Roughly normal (Irwin–Hall of four uniforms), mean `mean`.
    fn around(&mut self, mean: f64, spread: f64) -> f64 {
        let s: f64 = (0..4).map(|_| self.uniform()).sum();
        mean + spread * (s - 2.0)
    }

    fn sample(&mut self, n: usize, mean: f64, spread: f64) -> Vec<f64> {
        (0..n).map(|_| self.around(mean, spread)).collect()
    }

    /// As perftest prints Gb/s: two decimals, so close runs tie.
    fn printed(&mut self, n: usize, mean: f64, spread: f64) -> Vec<f64> {
        (0..n)
            .map(|_| (self.around(mean, spread) * 100.0).round() / 100.0)
            .collect()
    }
}

struct Case {
    name: String,
    a: Vec<f64>,
    b: Vec<f64>,
}

fn case(name: impl Into<String>, a: Vec<f64>, b: Vec<f64>) -> Case {
    Case {
        name: name.into(),
        a,
        b,
    }
}

fn cases() -> Vec<Case> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = vec![
        case("separated 3x3", vec![1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0]),
        case(
            "scipy docs",
            vec![19.0, 22.0, 16.0, 29.0, 24.0],
            vec![20.0, 11.0, 17.0, 12.0],
        ),
        case("2x3", vec![1.5, 2.5], vec![1.0, 2.0, 3.0]),
    ];
    // Continuous values, no ties: the exact test, half of them shifted.
    for (i, &(n1, n2)) in [
        (3, 4),
        (4, 4),
        (5, 5),
        (6, 8),
        (8, 8),
        (10, 10),
        (12, 9),
        (16, 16),
        (20, 24),
        (25, 25),
        (30, 30),
        (33, 40),
        (40, 40),
    ]
    .iter()
    .enumerate()
    {
        let shift = if i % 2 == 0 { 0.0 } else { 0.6 };
        let a = rng.sample(n1, 391.0, 1.0);
        let b = rng.sample(n2, 391.0 - shift, 1.0);
        out.push(case(format!("continuous {n1}x{n2} shift {shift}"), a, b));
    }
    // Two-decimal perftest values a few hundredths apart: many ties.
    for &(n1, n2, shift) in &[
        (5, 5, 0.0),
        (8, 12, 0.02),
        (20, 20, 0.0),
        (40, 40, 0.01),
        (40, 33, 0.03),
    ] {
        let a = rng.printed(n1, 391.23, 0.03);
        let b = rng.printed(n2, 391.23 - shift, 0.03);
        out.push(case(format!("printed {n1}x{n2} shift {shift}"), a, b));
    }
    // Capped at line rate: most values equal the cap.
    for &(n1, n2) in &[(10, 10), (30, 30)] {
        let cap = |v: Vec<f64>| -> Vec<f64> { v.into_iter().map(|x| x.min(392.5)).collect() };
        let a = cap(rng.printed(n1, 392.6, 0.3));
        let b = cap(rng.printed(n2, 392.3, 0.3));
        out.push(case(format!("capped {n1}x{n2}"), a, b));
    }
    for n in [5, 20] {
        let a = rng.sample(n, 100.0, 5.0);
        out.push(case(format!("equal samples {n}"), a.clone(), a));
    }
    out.push(case(
        "one side constant",
        vec![391.23; 11],
        rng.printed(9, 391.2, 0.05),
    ));
    out.push(case("both constant", vec![400.0; 5], vec![390.0; 6]));
    out.push(case("all equal", vec![391.23; 6], vec![391.23; 6]));
    out.push(case(
        "integers",
        (0..15).map(|_| (rng.uniform() * 5.0).floor()).collect(),
        (0..15)
            .map(|_| (rng.uniform() * 5.0).floor() + 1.0)
            .collect(),
    ));
    out.push(case(
        "wide range",
        rng.sample(7, 0.0, 1e3),
        rng.sample(9, 200.0, 1e3),
    ));
    // Past 50 per side: the normal approximation without ties.
    out.push(case(
        "large 60x55",
        rng.sample(60, 10.0, 1.0),
        rng.sample(55, 10.3, 1.0),
    ));
    out.push(case(
        "large 80x3",
        rng.sample(80, 10.0, 1.0),
        rng.sample(3, 11.0, 1.0),
    ));
    out
}

fn holm_families(rng: &mut Rng) -> Vec<Vec<f64>> {
    vec![
        vec![0.01, 0.04, 0.03, 0.005],
        vec![0.5, 0.9, 1.0],
        vec![0.001; 6],
        vec![0.2],
        (0..50).map(|_| rng.uniform().powi(3)).collect(),
        // Repeated values and exact zeros.
        (0..20)
            .map(|i| [0.0, 0.01, 0.01, 0.2, 0.7][i % 5] * rng.uniform().round())
            .collect(),
    ]
}

/// The largest difference seen for one quantity, for the closing report.
#[derive(Default)]
struct Worst {
    abs: f64,
    rel: f64,
}

impl Worst {
    /// Whether `got` is within `rel_tol` of `want`, or `abs_tol` of it.
    fn check(&mut self, got: f64, want: f64, rel_tol: f64, abs_tol: f64) -> bool {
        let abs = (got - want).abs();
        let rel = if want == 0.0 { abs } else { abs / want.abs() };
        self.abs = self.abs.max(abs);
        self.rel = self.rel.max(rel);
        got == want || abs <= abs_tol || rel <= rel_tol
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("scipy gave {v} where a number was expected"))
}

#[test]
fn stats_match_scipy() {
    let python = match python_with_scipy() {
        Ok(py) => py,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let cases = cases();
    let holm_in = holm_families(&mut Rng(42));
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("cases.json");
    let doc = json!({
        "cases": cases.iter().map(|c| json!({"a": c.a, "b": c.b})).collect::<Vec<_>>(),
        "holm": holm_in,
    });
    std::fs::write(&input, doc.to_string()).unwrap();
    let out = Command::new(&python)
        .args(["-c", SCRIPT])
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{python} failed on {}: {}",
        input.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let want: Value = serde_json::from_slice(&out.stdout).unwrap();
    let want_cases = want["cases"].as_array().unwrap();
    assert_eq!(want_cases.len(), cases.len());

    // Statistics to 1e-9, p-values to 1e-6 relative or 1e-12 absolute.
    let stat = |w: &mut Worst, got: f64, want: f64| w.check(got, want, 1e-9, 1e-9);
    let pval = |w: &mut Worst, got: f64, want: f64| w.check(got, want, 1e-6, 1e-12);
    let (mut u, mut p_exact, mut p_asym) = (Worst::default(), Worst::default(), Worst::default());
    let (mut t, mut df, mut p_welch) = (Worst::default(), Worst::default(), Worst::default());
    let (mut robust, mut hl, mut mz) = (Worst::default(), Worst::default(), Worst::default());
    let mut bad = Vec::new();
    let (mut n_exact, mut n_welch) = (0, 0);
    for (c, w) in cases.iter().zip(want_cases) {
        let name = &c.name;
        let mw = stats::mann_whitney(&c.a, &c.b).unwrap();
        if (mw.exact, mw.ties) != (w["exact"] == true, w["ties"] == true) {
            bad.push(format!("{name}: exact/ties {mw:?}, scipy side {w}"));
        }
        n_exact += usize::from(mw.exact);
        if !stat(&mut u, mw.u, f(&w["u"])) {
            bad.push(format!("{name}: U {} != {}", mw.u, w["u"]));
        }
        let p_worst = if mw.exact { &mut p_exact } else { &mut p_asym };
        if !pval(p_worst, mw.p, f(&w["p"])) {
            bad.push(format!("{name}: Mann-Whitney p {} != {}", mw.p, w["p"]));
        }

        match (stats::welch(&c.a, &c.b), &w["welch"]) {
            (None, Value::Null) => {}
            (Some(ours), theirs) if theirs.is_object() => {
                n_welch += 1;
                let ok = stat(&mut t, ours.t, f(&theirs["t"]))
                    & stat(&mut df, ours.df, f(&theirs["df"]))
                    & pval(&mut p_welch, ours.p, f(&theirs["p"]));
                if !ok {
                    bad.push(format!("{name}: Welch {ours:?} != {theirs}"));
                }
            }
            (ours, theirs) => bad.push(format!("{name}: Welch {ours:?} vs {theirs}")),
        }

        let ok = stat(&mut robust, stats::median(&c.a).unwrap(), f(&w["median"]))
            & stat(&mut robust, stats::mad(&c.a).unwrap(), f(&w["mad"]));
        if !ok {
            bad.push(format!("{name}: median/MAD"));
        }
        let shift = stats::hodges_lehmann(&c.a, &c.b).unwrap();
        if !stat(&mut hl, shift, f(&w["hl"])) {
            bad.push(format!("{name}: Hodges-Lehmann {shift} != {}", w["hl"]));
        }
        let z = stats::modified_z(&c.a, 0.005);
        let want_z = w["mz"].as_array().unwrap();
        assert_eq!(z.len(), want_z.len());
        for (got, want) in z.iter().zip(want_z) {
            if !stat(&mut mz, *got, f(want)) {
                bad.push(format!("{name}: modified z {got} != {want}"));
            }
        }
    }

    let mut p_holm = Worst::default();
    for (p, w) in holm_in.iter().zip(want["holm"].as_array().unwrap()) {
        let ours = stats::holm(p);
        let theirs = w.as_array().unwrap();
        assert_eq!(ours.len(), theirs.len());
        for (got, want) in ours.iter().zip(theirs) {
            if !pval(&mut p_holm, *got, f(want)) {
                bad.push(format!("holm {p:?}: {ours:?} != {w}"));
            }
        }
    }

    eprintln!(
        "scipy {} ({python}): {} cases, {n_exact} exact, {n_welch} with a Welch t",
        want["scipy"].as_str().unwrap_or("?"),
        cases.len()
    );
    for (what, w) in [
        ("U", &u),
        ("p exact", &p_exact),
        ("p asymptotic", &p_asym),
        ("Welch t", &t),
        ("Welch df", &df),
        ("Welch p", &p_welch),
        ("median/MAD", &robust),
        ("Hodges-Lehmann", &hl),
        ("modified z", &mz),
        ("Holm", &p_holm),
    ] {
        eprintln!("  {what:<15} max abs {:.3e}  max rel {:.3e}", w.abs, w.rel);
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // The cases must exercise both methods and the Welch None paths.
    assert!(n_exact >= 10 && n_exact < cases.len(), "{n_exact} exact");
    assert!(n_welch < cases.len());
}
