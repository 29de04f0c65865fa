//! The counter ledger: for one window (a round of a test), the changes of
//! every device's counters between a snapshot before and one after. One
//! record per device and source, holding only the counters that changed
//! (a reset or a saturated counter is kept as such, never differenced), so
//! the ledger grows with rounds × devices touched and not with how many
//! counters a NIC exposes. Judging the changes is `score::counters`.

use std::collections::HashMap;

use super::delta::{delta, Delta, DeltaStatus};
use super::Canonical;
use crate::report::events::{CounterRecord, LedgerRecord};

/// Whether a change is worth keeping: an increase, a reset, a saturation.
/// A counter printed on one side only says nothing about the window.
fn kept(d: &Delta) -> bool {
    match d.status {
        DeltaStatus::Value(v) => v > 0 && !d.canonical.is_gauge(),
        DeltaStatus::Reset { .. } | DeltaStatus::Saturated { .. } => true,
        DeltaStatus::Unavailable => false,
    }
}

/// Bytes and packets: what moved, not what went wrong.
fn traffic(d: &Delta) -> bool {
    matches!(
        d.canonical,
        Canonical::RxBytes | Canonical::TxBytes | Canonical::RxPackets | Canonical::TxPackets
    )
}

/// One record per (host, device, source) whose counters changed, in the
/// order of `after`; a device that stayed idle has none. A device whose
/// snapshot failed on either side gets a record with the error and no
/// changes: never an invented zero.
pub fn window(
    test: &str,
    round: usize,
    rep: u32,
    before: &[CounterRecord],
    after: &[CounterRecord],
) -> Vec<LedgerRecord> {
    let key = |c: &CounterRecord| {
        (
            c.snapshot.host.clone(),
            c.snapshot.device.clone(),
            c.snapshot.source.clone(),
        )
    };
    let first: HashMap<_, &CounterRecord> = before.iter().map(|c| (key(c), c)).collect();
    let mut traffic_from: HashMap<(String, String), &str> = HashMap::new();
    after
        .iter()
        .filter_map(|a| {
            let b = first.get(&key(a));
            let error = match (b, &a.error) {
                (_, Some(e)) => Some(format!("closing snapshot: {e}")),
                (None, None) => Some("no opening snapshot of this device".into()),
                (Some(b), None) => b.error.as_ref().map(|e| format!("opening snapshot: {e}")),
            };
            // Traffic counters are kept once per device, port-wide, from
            // its first source: per-priority copies and a second tool's
            // count of the same bytes would only grow the ledger. Every
            // error, pause, drop and congestion counter is kept as read.
            let dev = (a.snapshot.host.clone(), a.snapshot.device.clone());
            let first_source =
                *traffic_from.entry(dev).or_insert(&a.snapshot.source) == a.snapshot.source;
            let changes = match (b, &error) {
                (Some(b), None) => delta(&b.snapshot, &a.snapshot)
                    .into_iter()
                    .filter(kept)
                    .filter(|d| {
                        !traffic(d) || (first_source && d.priority.is_none() && d.queue.is_none())
                    })
                    .collect(),
                _ => Vec::new(),
            };
            (!changes.is_empty() || error.is_some()).then(|| LedgerRecord {
                test: test.to_string(),
                round,
                rep,
                host: a.snapshot.host.clone(),
                device: a.snapshot.device.clone(),
                source: a.snapshot.source.clone(),
                t0_s: b.map_or(a.snapshot.t_s, |b| b.snapshot.t_s),
                t1_s: a.snapshot.t_s,
                counts_link_down: a
                    .snapshot
                    .readings
                    .iter()
                    .any(|r| r.canonical == Canonical::LinkDown && r.vendor != "link_downed"),
                changes,
                error,
                raw: Vec::new(),
            })
        })
        .collect()
}

/// The increase of `canonical` (at `priority`, or port-wide when `None`)
/// summed over a record's changes; resets and saturations are not summed
/// (their true change is unknown) and are reported by the caller.
pub fn sum(r: &LedgerRecord, canonical: super::Canonical, priority: Option<Option<u8>>) -> u64 {
    r.changes
        .iter()
        .filter(|d| d.canonical == canonical)
        .filter(|d| priority.is_none_or(|p| d.priority == p))
        .map(|d| match d.status {
            DeltaStatus::Value(v) => v,
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::{Canonical, Reading, Snapshot};

    fn rec(t: f64, vals: &[(Canonical, &str, u64)], error: Option<&str>) -> CounterRecord {
        CounterRecord {
            test: "t".into(),
            round: 0,
            rep: 0,
            error: error.map(String::from),
            snapshot: Snapshot {
                host: "gpu1".into(),
                device: "rdma0".into(),
                source: "ethtool -S".into(),
                t_s: t,
                readings: vals
                    .iter()
                    .map(|(c, v, x)| Reading {
                        canonical: *c,
                        vendor: v.to_string(),
                        priority: None,
                        queue: None,
                        value: *x,
                        bits: None,
                    })
                    .collect(),
            },
        }
    }

    #[test]
    fn only_changes_are_kept_and_resets_are_not_differenced() {
        let b = rec(
            1.0,
            &[
                (Canonical::RxBytes, "rx_bytes_phy", 100),
                (Canonical::CrcErrors, "rx_crc_errors_phy", 0),
                (Canonical::LinkDown, "link_down_events_phy", 7),
            ],
            None,
        );
        let a = rec(
            9.0,
            &[
                (Canonical::RxBytes, "rx_bytes_phy", 900),
                (Canonical::CrcErrors, "rx_crc_errors_phy", 0),
                (Canonical::LinkDown, "link_down_events_phy", 2),
            ],
            None,
        );
        let w = window("t", 0, 0, &[b], &[a]);
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].t0_s, w[0].t1_s), (1.0, 9.0));
        assert_eq!(w[0].changes.len(), 2, "{:?}", w[0].changes);
        assert_eq!(sum(&w[0], Canonical::RxBytes, None), 800);
        assert_eq!(
            w[0].changes[1].status,
            DeltaStatus::Reset {
                before: 7,
                after: 2
            }
        );
        assert_eq!(sum(&w[0], Canonical::LinkDown, None), 0);
    }

    #[test]
    fn a_failed_snapshot_is_an_error_never_zero() {
        let b = rec(1.0, &[], Some("gpu1: unreachable"));
        let a = rec(9.0, &[(Canonical::RxBytes, "rx_bytes_phy", 900)], None);
        let w = window("t", 0, 0, &[b], &[a]);
        assert!(w[0].changes.is_empty());
        assert!(w[0].error.as_deref().unwrap().contains("opening snapshot"));
    }
}
