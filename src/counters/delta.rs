//! Differences between two snapshots of one source, and the first rise in a
//! series. A counter that went backwards (a reloaded switch, a driver reload,
//! a 32-bit hardware counter that wrapped) is reported as a reset with both
//! values, never as a negative or wrapped-around delta; a narrow counter
//! stopped at its maximum is reported as saturated, since its true delta is
//! unknown; a counter present on one side only is unavailable, not zero.

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};

use super::{Canonical, Reading, Snapshot};

/// How one counter changed between two snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeltaStatus {
    /// The increase (for a gauge: the value after).
    Value(u64),
    /// The counter went backwards: it was cleared or wrapped in between.
    Reset { before: u64, after: u64 },
    /// A narrow counter stood at `2^bits − 1` on either side.
    Saturated { bits: u8 },
    /// Printed by one snapshot only.
    Unavailable,
}

/// The change of one counter, named as its source names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delta {
    pub canonical: Canonical,
    pub vendor: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<u8>,
    pub status: DeltaStatus,
}

/// Readings are matched by canonical name, vendor name, priority and queue.
type Key<'a> = (Canonical, &'a str, Option<u8>, Option<u8>);

fn key(r: &Reading) -> Key<'_> {
    (r.canonical, r.vendor.as_str(), r.priority, r.queue)
}

/// The largest value a counter of `bits` bits holds; `None` for a full-width
/// (or nonsensical zero-width) counter.
fn ceiling(bits: Option<u8>) -> Option<u64> {
    match bits {
        Some(b @ 1..=63) => Some((1u64 << b) - 1),
        _ => None,
    }
}

/// Every counter of `after` against the same counter of `before`, in the order
/// of `after`, then the counters only `before` has. A reading listed twice is
/// matched in order of appearance.
///
/// A gauge ([`Canonical::is_gauge`]) gives its value after, also when the
/// snapshot before lacks it; one missing after is unavailable.
pub fn delta(before: &Snapshot, after: &Snapshot) -> Vec<Delta> {
    let mut pending: HashMap<Key<'_>, VecDeque<usize>> = HashMap::new();
    for (i, r) in before.readings.iter().enumerate() {
        pending.entry(key(r)).or_default().push_back(i);
    }
    let mut used = vec![false; before.readings.len()];
    let mut out = Vec::with_capacity(after.readings.len());
    for a in &after.readings {
        let b = pending.get_mut(&key(a)).and_then(VecDeque::pop_front);
        if let Some(i) = b {
            used[i] = true;
        }
        let status = match b.map(|i| &before.readings[i]) {
            _ if a.canonical.is_gauge() => DeltaStatus::Value(a.value),
            None => DeltaStatus::Unavailable,
            Some(b) => change(b, a),
        };
        out.push(entry(a, status));
    }
    for (r, _) in before.readings.iter().zip(&used).filter(|(_, u)| !**u) {
        out.push(entry(r, DeltaStatus::Unavailable));
    }
    out
}

fn change(b: &Reading, a: &Reading) -> DeltaStatus {
    if a.value < b.value {
        return DeltaStatus::Reset {
            before: b.value,
            after: a.value,
        };
    }
    let bits = a.bits.or(b.bits);
    if let (Some(max), Some(bits)) = (ceiling(bits), bits) {
        if a.value >= max || b.value >= max {
            return DeltaStatus::Saturated { bits };
        }
    }
    DeltaStatus::Value(a.value - b.value)
}

fn entry(r: &Reading, status: DeltaStatus) -> Delta {
    Delta {
        canonical: r.canonical,
        vendor: r.vendor.clone(),
        priority: r.priority,
        queue: r.queue,
        status,
    }
}

/// The time (`t_s`) of the first snapshot in which `canonical` at `priority`
/// rose: where the counter summed over the readings that match is higher than
/// before. `priority: None` selects the port-wide readings, not every priority.
///
/// The comparison is made per counter (vendor name and queue) against that
/// counter's previous value, which for monotonic counters is the same as
/// comparing the sum with the first snapshot's, but keeps a reset of one
/// counter from hiding another's rise. A counter's first appearance is its
/// baseline, not a rise. `None` when nothing rose.
pub fn first_rise(series: &[Snapshot], canonical: Canonical, priority: Option<u8>) -> Option<f64> {
    let mut last: HashMap<(&str, Option<u8>), u128> = HashMap::new();
    for snap in series {
        let mut now: HashMap<(&str, Option<u8>), u128> = HashMap::new();
        for r in &snap.readings {
            if r.canonical == canonical && r.priority == priority {
                *now.entry((r.vendor.as_str(), r.queue)).or_default() += u128::from(r.value);
            }
        }
        let rose = now
            .iter()
            .any(|(k, v)| last.get(k).is_some_and(|prev| v > prev));
        if rose {
            return Some(snap.t_s);
        }
        last.extend(now);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(canonical: Canonical, vendor: &str, priority: Option<u8>, value: u64) -> Reading {
        Reading {
            canonical,
            vendor: vendor.into(),
            priority,
            queue: None,
            value,
            bits: None,
        }
    }

    fn narrow(vendor: &str, value: u64, bits: u8) -> Reading {
        Reading {
            bits: Some(bits),
            ..r(Canonical::SymbolErrors, vendor, None, value)
        }
    }

    fn snap(t_s: f64, readings: Vec<Reading>) -> Snapshot {
        Snapshot {
            host: "gpu01".into(),
            device: "mlx5_0".into(),
            source: "sysfs".into(),
            t_s,
            readings,
        }
    }

    fn status(d: &[Delta], vendor: &str) -> DeltaStatus {
        d.iter()
            .find(|d| d.vendor == vendor)
            .unwrap_or_else(|| panic!("{vendor} missing"))
            .status
    }

    #[test]
    fn counters_delta_value_and_reset() {
        let before = snap(0.0, vec![r(Canonical::RxBytes, "rx_bytes_phy", None, 1000)]);
        let after = snap(1.0, vec![r(Canonical::RxBytes, "rx_bytes_phy", None, 1500)]);
        assert_eq!(
            status(&delta(&before, &after), "rx_bytes_phy"),
            DeltaStatus::Value(500)
        );
        // A reloaded driver starts from zero: report it, never a negative delta.
        let reloaded = snap(2.0, vec![r(Canonical::RxBytes, "rx_bytes_phy", None, 30)]);
        assert_eq!(
            status(&delta(&after, &reloaded), "rx_bytes_phy"),
            DeltaStatus::Reset {
                before: 1500,
                after: 30
            }
        );
    }

    #[test]
    fn counters_delta_saturated_on_either_side() {
        let b = snap(
            0.0,
            vec![
                narrow("symbol_error", 65000, 16),
                narrow("link_downed", 255, 8),
            ],
        );
        let a = snap(
            1.0,
            vec![
                narrow("symbol_error", 65535, 16),
                narrow("link_downed", 255, 8),
            ],
        );
        let d = delta(&b, &a);
        assert_eq!(
            status(&d, "symbol_error"),
            DeltaStatus::Saturated { bits: 16 }
        );
        assert_eq!(
            status(&d, "link_downed"),
            DeltaStatus::Saturated { bits: 8 }
        );
        // Below the ceiling a narrow counter differences normally.
        let a2 = snap(1.0, vec![narrow("symbol_error", 65534, 16)]);
        assert_eq!(
            status(&delta(&b, &a2), "symbol_error"),
            DeltaStatus::Value(534)
        );
        // Cleared after saturating: that is a reset, not a saturation.
        let cleared = snap(2.0, vec![narrow("symbol_error", 3, 16)]);
        assert_eq!(
            status(&delta(&a, &cleared), "symbol_error"),
            DeltaStatus::Reset {
                before: 65535,
                after: 3
            }
        );
        // The 34-bit byte form of a 32-bit word counter.
        let w = |v| Reading {
            bits: Some(34),
            ..r(Canonical::TxBytes, "port_xmit_data", None, v)
        };
        let d = delta(&snap(0.0, vec![w(400)]), &snap(1.0, vec![w((1 << 34) - 1)]));
        assert_eq!(
            status(&d, "port_xmit_data"),
            DeltaStatus::Saturated { bits: 34 }
        );
    }

    #[test]
    fn counters_delta_unavailable_on_one_side() {
        let b = snap(
            0.0,
            vec![
                r(Canonical::PfcPauseRx, "rx_prio3_pause", Some(3), 5),
                r(Canonical::PfcPauseRx, "rx_prio4_pause", Some(4), 5),
            ],
        );
        let a = snap(
            1.0,
            vec![
                r(Canonical::PfcPauseRx, "rx_prio3_pause", Some(3), 9),
                r(Canonical::CnpSent, "np_cnp_sent", None, 0),
            ],
        );
        let d = delta(&b, &a);
        assert_eq!(d.len(), 3);
        assert_eq!(status(&d, "rx_prio3_pause"), DeltaStatus::Value(4));
        assert_eq!(status(&d, "np_cnp_sent"), DeltaStatus::Unavailable);
        assert_eq!(status(&d, "rx_prio4_pause"), DeltaStatus::Unavailable);
        assert_eq!(d[2].priority, Some(4));
    }

    #[test]
    fn counters_delta_matches_priority_and_queue_not_just_name() {
        let mut q0 = r(Canonical::Drops, "drops", None, 1);
        q0.queue = Some(0);
        let mut q1 = r(Canonical::Drops, "drops", None, 7);
        q1.queue = Some(1);
        let b = snap(0.0, vec![q0.clone(), q1.clone()]);
        q0.value = 2;
        q1.value = 9;
        let d = delta(&b, &snap(1.0, vec![q1, q0]));
        assert_eq!(d[0].queue, Some(1));
        assert_eq!(d[0].status, DeltaStatus::Value(2));
        assert_eq!(d[1].status, DeltaStatus::Value(1));
    }

    #[test]
    fn counters_delta_gauge_gives_after_value() {
        let g = |v| {
            let mut x = r(Canonical::BufferWatermark, "wm", None, v);
            x.queue = Some(3);
            x
        };
        let d = delta(&snap(0.0, vec![g(9000)]), &snap(1.0, vec![g(4000)]));
        assert_eq!(d[0].status, DeltaStatus::Value(4000));
        let d = delta(&snap(0.0, vec![]), &snap(1.0, vec![g(4000)]));
        assert_eq!(d[0].status, DeltaStatus::Value(4000));
        let d = delta(&snap(0.0, vec![g(1)]), &snap(1.0, vec![]));
        assert_eq!(d[0].status, DeltaStatus::Unavailable);
    }

    #[test]
    fn counters_first_rise_finds_ecn_before_pause() {
        let s = |t, ecn, pause| {
            snap(
                t,
                vec![
                    r(
                        Canonical::EcnMarked,
                        "np_ecn_marked_roce_packets",
                        None,
                        ecn,
                    ),
                    r(Canonical::PfcPauseRx, "rx_prio3_pause", Some(3), pause),
                    r(
                        Canonical::PfcPauseRx,
                        "rx_prio0_pause",
                        Some(0),
                        100 + t as u64,
                    ),
                ],
            )
        };
        let series = [s(0.0, 10, 5), s(1.0, 10, 5), s(2.0, 12, 5), s(3.0, 15, 8)];
        assert_eq!(first_rise(&series, Canonical::EcnMarked, None), Some(2.0));
        assert_eq!(
            first_rise(&series, Canonical::PfcPauseRx, Some(3)),
            Some(3.0)
        );
        assert_eq!(
            first_rise(&series, Canonical::PfcPauseRx, Some(0)),
            Some(1.0)
        );
        // No port-wide pause reading: nothing rose.
        assert_eq!(first_rise(&series, Canonical::PfcPauseRx, None), None);
        assert_eq!(first_rise(&series, Canonical::CnpSent, None), None);
        assert_eq!(first_rise(&[], Canonical::CnpSent, None), None);
    }

    #[test]
    fn counters_first_rise_survives_a_reset_and_late_appearance() {
        let cnp = |t, v| snap(t, vec![r(Canonical::CnpSent, "np_cnp_sent", None, v)]);
        // Reset between 1 and 2; the rise is at 3, relative to the value after the reset.
        let series = [cnp(0.0, 500), cnp(1.0, 500), cnp(2.0, 0), cnp(3.0, 4)];
        assert_eq!(first_rise(&series, Canonical::CnpSent, None), Some(3.0));
        // First seen at 1: that is its baseline.
        let series = [snap(0.0, vec![]), cnp(1.0, 7), cnp(2.0, 7), cnp(3.0, 8)];
        assert_eq!(first_rise(&series, Canonical::CnpSent, None), Some(3.0));
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A counter that went backwards is a reset with both values, never a
        /// negative or wrapped-around delta; otherwise the delta is exact.
        #[test]
        fn backwards_is_a_reset(before in any::<u64>(), after in any::<u64>()) {
            let reading = |v| Reading {
                canonical: Canonical::RxBytes,
                vendor: "rx_bytes_phy".into(),
                priority: None,
                queue: None,
                value: v,
                bits: None,
            };
            let snap = |t_s, v| Snapshot {
                host: "h".into(),
                device: "d".into(),
                source: "ethtool -S".into(),
                t_s,
                readings: vec![reading(v)],
            };
            let d = delta(&snap(0.0, before), &snap(1.0, after));
            let want = if after < before {
                DeltaStatus::Reset { before, after }
            } else {
                DeltaStatus::Value(after - before)
            };
            prop_assert_eq!(d[0].status, want);
        }
    }
}
