//! Inline SVG charts: lines over a linear or log₂ axis with thresholds,
//! markers and shaded spans, and box plots with their outliers named. Every
//! label is escaped; nothing is fetched.

use std::fmt::Write as _;

use super::esc;

const W: f64 = 640.0;
const H: f64 = 250.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 38.0;

/// How an axis maps values and prints its ticks.
#[derive(Clone, Copy, PartialEq)]
pub enum Scale {
    Linear,
    /// Message sizes in bytes: log₂, ticks as 1K, 1M, 1G.
    Bytes,
}

pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A horizontal or vertical rule, drawn with a CSS class (`thr`, `lim`,
/// `rec`) and labelled.
pub struct Rule {
    pub at: f64,
    pub class: &'static str,
    pub label: String,
}

#[derive(Default)]
pub struct Chart {
    pub label: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    /// Thresholds across the value axis.
    pub levels: Vec<Rule>,
    /// Moments along the x axis.
    pub marks: Vec<Rule>,
    /// Shaded x ranges (a fault's down time).
    pub spans: Vec<(f64, f64, String)>,
}

impl Chart {
    pub fn render(&self, scale: Scale) -> String {
        let pts = self.lines.iter().flat_map(|l| &l.points).filter(|(x, y)| {
            x.is_finite() && y.is_finite() && (scale == Scale::Linear || *x > 0.0)
        });
        let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
        for &(x, y) in pts {
            let x = tx(scale, x);
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
        if x0 > x1 {
            return String::new();
        }
        for m in &self.marks {
            x0 = x0.min(tx(scale, m.at));
            x1 = x1.max(tx(scale, m.at));
        }
        for (a, b, _) in &self.spans {
            x0 = x0.min(tx(scale, *a));
            x1 = x1.max(tx(scale, *b));
        }
        for l in &self.levels {
            y1 = y1.max(l.at);
        }
        if x1 - x0 < 1e-9 {
            x1 = x0 + 1.0;
        }
        let y1 = nice_ceiling(y1.max(1e-9) * 1.05);
        let px = |x: f64| LEFT + (tx(scale, x) - x0) / (x1 - x0) * (W - LEFT - RIGHT);
        let py = |y: f64| H - BOTTOM - y.max(0.0) / y1 * (H - TOP - BOTTOM);
        // The legend goes under the axis label, one line per curve.
        let legend = if self.lines.len() > 1 {
            self.lines.len().min(5)
        } else {
            0
        };
        let total_h = H + 14.0 * legend as f64;
        let mut s = format!(
            "<svg viewBox=\"0 0 {W} {total_h}\" width=\"{W}\" height=\"{total_h}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
            esc(&self.label),
            esc(&self.label)
        );
        for (a, b, label) in &self.spans {
            let _ = write!(
                s,
                "<rect class=\"fault\" x=\"{:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\"><title>{}</title></rect>",
                px(*a),
                (px(*b) - px(*a)).max(1.0),
                H - TOP - BOTTOM,
                esc(label)
            );
        }
        for t in linear_ticks(0.0, y1) {
            let y = py(t);
            let _ = write!(
                s,
                "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                W - RIGHT,
                LEFT - 4.0,
                y + 4.0,
                short(t),
            );
        }
        let xt: Vec<(f64, String)> = match scale {
            Scale::Linear => linear_ticks(x0, x1)
                .into_iter()
                .map(|t| (t, short(t)))
                .collect(),
            Scale::Bytes => byte_ticks(x0, x1),
        };
        for (t, label) in xt {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                px(t),
                H - BOTTOM + 14.0,
                esc(&label)
            );
        }
        let _ = write!(
            s,
            "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{b}\"/><line class=\"axis\" x1=\"{LEFT}\" x2=\"{r}\" y1=\"{b}\" y2=\"{b}\"/>\
<text x=\"{cx}\" y=\"{lb}\" text-anchor=\"middle\">{}</text><text x=\"12\" y=\"{cy}\" transform=\"rotate(-90 12 {cy})\" text-anchor=\"middle\">{}</text>",
            esc(&self.x_label),
            esc(&self.y_label),
            b = H - BOTTOM,
            r = W - RIGHT,
            cx = (LEFT + W - RIGHT) / 2.0,
            lb = H - 4.0,
            cy = (TOP + H - BOTTOM) / 2.0,
        );
        for (i, l) in self.lines.iter().enumerate() {
            let path: Vec<String> = l
                .points
                .iter()
                .filter(|(x, y)| {
                    x.is_finite() && y.is_finite() && (scale == Scale::Linear || *x > 0.0)
                })
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = write!(
                s,
                "<polyline class=\"line{}\" points=\"{}\"><title>{}</title></polyline>",
                i % 5,
                path.join(" "),
                esc(&l.name)
            );
        }
        // The highest level's label sits above its rule, the others below
        // theirs, so two close thresholds stay readable.
        let top_level = self.levels.iter().map(|l| l.at).fold(f64::MIN, f64::max);
        for l in &self.levels {
            let y = py(l.at);
            let ly = if l.at >= top_level { y - 3.0 } else { y + 11.0 };
            let _ = write!(
                s,
                "<line class=\"{}\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                l.class,
                W - RIGHT,
                W - RIGHT - 2.0,
                ly,
                esc(&l.label)
            );
        }
        for (i, m) in self.marks.iter().enumerate() {
            let x = px(m.at);
            let _ = write!(
                s,
                "<line class=\"{}\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                m.class,
                H - BOTTOM,
                x + 3.0,
                TOP + 10.0 + 12.0 * i as f64,
                esc(&m.label)
            );
        }
        if legend > 0 {
            for (i, l) in self.lines.iter().enumerate().take(legend) {
                let _ = write!(
                    s,
                    "<line class=\"line{i}\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                    LEFT + 8.0,
                    LEFT + 24.0,
                    LEFT + 28.0,
                    H + 12.0 + 14.0 * i as f64,
                    esc(&l.name),
                    y = H + 8.0 + 14.0 * i as f64
                );
            }
        }
        s.push_str("</svg>");
        s
    }
}

fn tx(scale: Scale, x: f64) -> f64 {
    match scale {
        Scale::Linear => x,
        Scale::Bytes => x.max(1.0).log2(),
    }
}

/// 1, 2 or 5 times a power of ten at or above `v`.
fn nice_ceiling(v: f64) -> f64 {
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|c| *c >= v)
        .unwrap_or(10.0 * p)
}

fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / 5.0;
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|c| *c >= raw)
        .unwrap_or(10.0 * p);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-6 && out.len() < 12 {
        out.push(t);
        t += step;
    }
    out
}

/// Ticks at powers of two (as log₂ positions), at most eight.
fn byte_ticks(lo: f64, hi: f64) -> Vec<(f64, String)> {
    let (a, b) = (lo.ceil() as i64, hi.floor() as i64);
    let step = ((b - a) / 7).max(1);
    (a..=b)
        .step_by(step as usize)
        .map(|e| {
            let v = 2f64.powi(e as i32);
            (v, bytes(v))
        })
        .collect()
}

pub fn bytes(v: f64) -> String {
    for (unit, size) in [("G", 1u64 << 30), ("M", 1 << 20), ("K", 1 << 10)] {
        if v >= size as f64 {
            return format!("{}{unit}", short(v / size as f64));
        }
    }
    short(v)
}

fn short(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 || (v.fract()).abs() < 1e-9 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// One row of a box plot: a group's values, each named, and which names
/// are marked (a suspect, a failing result) whatever their value.
pub struct Group {
    pub label: String,
    pub values: Vec<(String, f64)>,
    pub marked: Vec<String>,
}

/// Most outliers drawn per group; the rest are counted in the row's title.
const OUTLIERS_DRAWN: usize = 40;

/// Horizontal box plots (quartiles, whiskers to the last value within
/// 1.5 IQR), outliers and marked values as named dots, the threshold as a
/// dashed rule.
pub fn boxes(label: &str, unit: &str, groups: &[Group], threshold: Option<&Rule>) -> String {
    let all: Vec<f64> = groups
        .iter()
        .flat_map(|g| g.values.iter().map(|v| v.1))
        .filter(|v| v.is_finite())
        .collect();
    let (Some(lo), Some(hi)) = (
        all.iter().copied().reduce(f64::min),
        all.iter().copied().reduce(f64::max),
    ) else {
        return String::new();
    };
    let (mut lo, mut hi) = (lo, hi);
    if let Some(t) = threshold {
        lo = lo.min(t.at);
        hi = hi.max(t.at);
    }
    let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.002).max(1e-6);
    let (lo, hi) = (lo - pad, hi + pad);
    let row = 22.0;
    let h = TOP + BOTTOM + row * groups.len() as f64;
    let left = 110.0;
    let px = |v: f64| left + (v - lo) / (hi - lo) * (W - left - RIGHT);
    let mut s = format!(
        "<svg viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
        esc(label),
        esc(label)
    );
    for t in linear_ticks(lo, hi) {
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{:.1}\"/><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            h - BOTTOM,
            h - BOTTOM + 14.0,
            short(t),
            x = px(t)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        (left + W - RIGHT) / 2.0,
        h - 4.0,
        esc(unit)
    );
    for (i, g) in groups.iter().enumerate() {
        let mut v: Vec<f64> = g
            .values
            .iter()
            .map(|x| x.1)
            .filter(|x| x.is_finite())
            .collect();
        if v.is_empty() {
            continue;
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let k = p * (v.len() - 1) as f64;
            let (a, b) = (k.floor() as usize, k.ceil() as usize);
            v[a] + (v[b] - v[a]) * (k - a as f64)
        };
        let (q1, med, q3) = (q(0.25), q(0.5), q(0.75));
        let iqr = q3 - q1;
        let (fence_lo, fence_hi) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
        let inside: Vec<f64> = v
            .iter()
            .copied()
            .filter(|x| *x >= fence_lo && *x <= fence_hi)
            .collect();
        let (wl, wh) = (
            inside.first().copied().unwrap_or(q1),
            inside.last().copied().unwrap_or(q3),
        );
        let y = TOP + row * i as f64 + row / 2.0;
        let _ = write!(
            s,
            "<g><title>{}: {} values, median {}, quartiles {}–{}</title><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
<line class=\"whisk\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
<rect class=\"box\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>\
<line class=\"med\" x1=\"{m:.1}\" x2=\"{m:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/></g>",
            esc(&g.label),
            v.len(),
            short(med),
            short(q1),
            short(q3),
            left - 6.0,
            y + 4.0,
            esc(&g.label),
            px(wl),
            px(wh),
            px(q1),
            y - 6.0,
            (px(q3) - px(q1)).max(1.0),
            12.0,
            y - 7.0,
            y + 7.0,
            m = px(med)
        );
        let mut drawn = 0;
        for (name, x) in &g.values {
            let out = *x < fence_lo || *x > fence_hi;
            if !(out || g.marked.contains(name)) || !x.is_finite() {
                continue;
            }
            drawn += 1;
            if drawn > OUTLIERS_DRAWN {
                continue;
            }
            let _ = write!(
                s,
                "<circle class=\"out\" cx=\"{:.1}\" cy=\"{y:.1}\" r=\"3.5\"><title>{}: {} {}</title></circle>",
                px(*x),
                esc(name),
                short(*x),
                esc(unit)
            );
        }
    }
    if let Some(t) = threshold {
        let x = px(t.at);
        // The label stays inside: left of the rule in the right half.
        let (lx, anchor) = if x > (left + W) / 2.0 {
            (x - 3.0, "end")
        } else {
            (x + 3.0, "start")
        };
        let _ = write!(
            s,
            "<line class=\"{}\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{:.1}\"/><text x=\"{lx:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text>",
            t.class,
            h - BOTTOM,
            TOP - 2.0,
            esc(&t.label)
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_ticks_are_powers_of_two_and_labelled_in_binary_units() {
        let t = byte_ticks(3.0, 33.0);
        assert!(t.len() <= 8, "{}", t.len());
        assert_eq!(t[0].1, "8");
        assert!(
            t.iter().any(|(_, l)| l.ends_with('G')),
            "{:?}",
            t.iter().map(|x| &x.1).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_chart_escapes_its_labels_and_draws_its_threshold() {
        let c = Chart {
            label: "<script>x</script>".into(),
            lines: vec![Line {
                name: "a<b".into(),
                points: vec![(1024.0, 10.0), (1048576.0, 90.0)],
            }],
            levels: vec![Rule {
                at: 50.0,
                class: "thr",
                label: "min 50".into(),
            }],
            ..Default::default()
        };
        let s = c.render(Scale::Bytes);
        assert!(!s.contains("<script>"));
        assert!(s.contains("&lt;script&gt;"));
        assert!(s.contains("class=\"thr\""));
        assert!(s.contains("min 50"));
    }

    #[test]
    fn box_plots_mark_outliers_and_named_values() {
        let mut values: Vec<(String, f64)> = (0..20)
            .map(|i| (format!("n{i}"), 390.0 + (i % 3) as f64))
            .collect();
        values.push(("slow".into(), 200.0));
        let g = Group {
            label: "rail 0".into(),
            values,
            marked: vec!["n1".into()],
        };
        let s = boxes("x", "Gb/s", &[g], None);
        assert!(s.contains("<title>slow: 200 Gb/s</title>"), "{s}");
        assert!(s.contains("<title>n1: 391 Gb/s</title>"), "{s}");
        assert!(!s.contains("<title>n2:"), "{s}");
    }
}
