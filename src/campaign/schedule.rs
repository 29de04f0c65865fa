//! The campaign's schedule, computed and never run: which fabrics may not
//! run at once (read from their inventories, not from the campaign file),
//! when each starts and ends on its estimate, the critical path, and the
//! largest set of fabrics, in file order, that fits a window.
//!
//! Fabrics start in file order. With `parallel` above 1, a fabric waiting
//! for one it shares a device with lets the next one in the file start
//! first, so a free slot is never left idle for it.

use std::collections::HashMap;
use std::time::Duration;

use crate::config::inventory::TransportSpec;
use crate::config::model::Inventory;

/// Why two fabrics must not run at once, or `None` when they share
/// nothing. Two entries on one fabric (its name is its run lock and fault
/// journal) always conflict. On real transports, so do fabrics whose
/// inventories name one address: a host, a NIC, a switch, or the
/// controller the switches of a group are reached through (an ACI APIC
/// is every one of its switches' address). Emulated fabrics are each
/// their own world, so their made-up addresses are never shared.
pub fn conflict(a: &Inventory, b: &Inventory) -> Option<String> {
    if a.fabric.name == b.fabric.name {
        return Some(format!("both are fabric {}", a.fabric.name));
    }
    if matches!(a.transport, TransportSpec::Emulated)
        || matches!(b.transport, TransportSpec::Emulated)
    {
        return None;
    }
    let theirs = addresses(b);
    let mut shared: Vec<String> = addresses(a)
        .into_iter()
        .filter_map(|(addr, what)| {
            theirs.get(&addr).map(|other| {
                format!(
                    "{addr} ({what} in {}, {other} in {})",
                    a.fabric.name, b.fabric.name
                )
            })
        })
        .collect();
    shared.sort();
    shared.dedup();
    match shared.len() {
        0 => None,
        1 => Some(format!("they share {}", shared[0])),
        n => Some(format!(
            "they share {} and {} more address(es)",
            shared[0],
            n - 1
        )),
    }
}

/// Every address the inventory reaches, with what it is.
fn addresses(inv: &Inventory) -> HashMap<String, String> {
    let mut m = HashMap::new();
    for n in &inv.nodes {
        m.entry(n.address.to_ascii_lowercase())
            .or_insert_with(|| format!("node {}", n.name));
    }
    for nic in &inv.nics {
        if let Some(a) = &nic.address {
            let node = &inv.nodes[nic.node].name;
            m.entry(a.to_ascii_lowercase())
                .or_insert_with(|| format!("NIC {node}:{}", nic.device));
        }
    }
    for s in &inv.switches {
        let what = if s.driver.through_controller() {
            format!("the controller of switch {}", s.name)
        } else {
            format!("switch {}", s.name)
        };
        m.entry(s.address.to_ascii_lowercase()).or_insert(what);
    }
    m
}

/// Start and end of one fabric, from the campaign's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub start: Duration,
    pub end: Duration,
}

/// The schedule of the fabrics `include`d, on their `estimates`, at most
/// `parallel` at once and never two that `conflicts` pairs. Returns each
/// fabric's slot (`None` when left out) and the critical path (when the
/// last one ends).
pub fn schedule(
    estimates: &[Duration],
    include: &[bool],
    conflicts: &[Vec<bool>],
    parallel: usize,
) -> (Vec<Option<Slot>>, Duration) {
    let parallel = parallel.max(1);
    let mut slots = vec![None; estimates.len()];
    let mut pending: Vec<usize> = (0..estimates.len()).filter(|&i| include[i]).collect();
    let mut running: Vec<(usize, Duration)> = Vec::new();
    let mut now = Duration::ZERO;
    let mut end = Duration::ZERO;
    loop {
        let mut k = 0;
        while k < pending.len() && running.len() < parallel {
            let i = pending[k];
            if running.iter().any(|&(j, _)| conflicts[i][j]) {
                k += 1;
                continue;
            }
            pending.remove(k);
            let e = now + estimates[i];
            slots[i] = Some(Slot { start: now, end: e });
            end = end.max(e);
            running.push((i, e));
        }
        let Some(next) = running.iter().map(|&(_, e)| e).min() else {
            break;
        };
        now = next;
        running.retain(|&(_, e)| e > now);
    }
    (slots, end)
}

/// The fabrics, in file order, that fit `window` together: each is kept
/// when the schedule with it still ends inside the window.
pub fn fitting(
    estimates: &[Duration],
    conflicts: &[Vec<bool>],
    parallel: usize,
    window: Duration,
) -> Vec<bool> {
    let mut include = vec![false; estimates.len()];
    for i in 0..estimates.len() {
        include[i] = true;
        if schedule(estimates, &include, conflicts, parallel).1 > window {
            include[i] = false;
        }
    }
    include
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(n: u64) -> Duration {
        Duration::from_secs(60 * n)
    }

    fn none(n: usize) -> Vec<Vec<bool>> {
        vec![vec![false; n]; n]
    }

    #[test]
    fn one_at_a_time_is_the_sum_in_file_order() {
        let (slots, end) = schedule(&[m(10), m(20), m(5)], &[true; 3], &none(3), 1);
        assert_eq!(end, m(35));
        assert_eq!(
            slots[1],
            Some(Slot {
                start: m(10),
                end: m(30)
            })
        );
        assert_eq!(
            slots[2],
            Some(Slot {
                start: m(30),
                end: m(35)
            })
        );
    }

    #[test]
    fn parallel_lanes_take_the_next_fabric_as_one_frees() {
        let (slots, end) = schedule(&[m(10), m(20), m(5), m(5)], &[true; 4], &none(4), 2);
        assert_eq!(slots[2].unwrap().start, m(10));
        assert_eq!(slots[3].unwrap().start, m(15));
        assert_eq!(end, m(20));
    }

    #[test]
    fn conflicting_fabrics_never_overlap_and_others_go_ahead() {
        let mut c = none(3);
        c[0][1] = true;
        c[1][0] = true;
        let (slots, end) = schedule(&[m(10), m(10), m(3)], &[true; 3], &c, 3);
        assert_eq!(slots[0].unwrap().start, Duration::ZERO);
        assert_eq!(
            slots[2].unwrap().start,
            Duration::ZERO,
            "no conflict: starts at once"
        );
        assert_eq!(
            slots[1].unwrap().start,
            m(10),
            "waits for the fabric it shares with"
        );
        assert_eq!(end, m(20));
    }

    fn inventory(name: &str, hosts: &str, transport: &str) -> Inventory {
        let text = format!(
            "fabric:\n  name: {name}\n  environment: lab\n  rails: 1\n  roce: {{pfc_priority: 3, dscp_roce: 26, dscp_cnp: 48, dcqcn: false, mtu: 4096}}\ntransport: {transport}\nnodes:\n  - hosts: {hosts}\n    nics:\n      - device: lo\n        netdev: lo\n        gid_index: 0\n        rail: 0\n        speed_gbps: 100\n"
        );
        crate::config::check::parse_inventory(name, &text).expect("a valid inventory")
    }

    #[test]
    fn shared_hosts_conflict_on_real_transports_only() {
        let a = inventory("pod-a", "gpu[1-2]", "local");
        let b = inventory("pod-b", "gpu[2-3]", "local");
        let c = inventory("pod-c", "gpu[4-5]", "local");
        let why = conflict(&a, &b).expect("gpu2 is in both");
        assert!(why.contains("gpu2"), "{why}");
        assert_eq!(conflict(&a, &c), None);
        assert!(conflict(&a, &a).unwrap().contains("both are fabric pod-a"));
        let ea = inventory("emu-a", "gpu[1-2]", "emulated");
        let eb = inventory("emu-b", "gpu[1-2]", "emulated");
        assert_eq!(conflict(&ea, &eb), None, "emulated pods share nothing");
    }

    #[test]
    fn the_fitting_set_skips_what_does_not_fit_and_keeps_later_ones() {
        let fit = fitting(&[m(10), m(30), m(15)], &none(3), 1, m(30));
        assert_eq!(fit, vec![true, false, true]);
        let none_fit = fitting(&[m(40)], &none(1), 1, m(30));
        assert_eq!(none_fit, vec![false]);
    }
}
