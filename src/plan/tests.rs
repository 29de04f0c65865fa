use std::collections::HashSet;

use super::*;
use crate::config::check::parse_inventory;
use crate::config::check_suite::parse_suite;
use crate::config::generate::{generate, to_yaml, PodShape};

fn pod(nodes: u32, rails: u32) -> Inventory {
    let shape = PodShape {
        nodes,
        rails,
        nodes_per_leaf: 32,
        spines: 4,
        ..PodShape::default()
    };
    let yaml = to_yaml(&shape, &generate(&shape).unwrap()).unwrap();
    parse_inventory("gen.yaml", &yaml).unwrap()
}

fn suite(inv: &Inventory, tests: &str) -> Suite {
    let text = format!("suite: {{name: t}}\ntests:\n{tests}");
    parse_suite("s.yaml", &text, inv).unwrap_or_else(|e| panic!("{e}"))
}

/// Asserts no NIC is in two steps of a round and returns node pairs seen.
fn check_rounds(inv: &Inventory, rounds: &[Round]) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    for (k, round) in rounds.iter().enumerate() {
        let mut used = HashSet::new();
        for step in round {
            for nic in step.nics(inv) {
                assert!(
                    used.insert(nic),
                    "round {k}: {} is in two steps",
                    inv.nic_name(nic)
                );
            }
            if let Step::Pair { a, b } = step {
                let (x, y) = (inv.nics[*a].node, inv.nics[*b].node);
                if inv.nics[*a].rail == 0 {
                    pairs.push((x.min(y), x.max(y)));
                }
            }
        }
    }
    pairs
}

#[test]
fn full_mesh_on_1024_nodes_is_the_lower_bound_and_covers_each_pair_once() {
    for n in [1024u32, 1023] {
        let inv = pod(n, 2);
        let s = suite(&inv, "  - name: mesh\n    perftest: {tool: ib_write_bw, size: 1M, duration: 5s}\n    pattern: full-mesh\n");
        let plan = build(&s, &inv, &Narrowing::default(), 1).unwrap();
        let rounds = &plan.tests[0].rounds;
        assert_eq!(rounds.len(), 1023, "{n} nodes");
        let mut pairs = check_rounds(&inv, rounds);
        let total = pairs.len();
        pairs.sort_unstable();
        pairs.dedup();
        assert_eq!(pairs.len(), total, "a node pair ran twice");
        assert_eq!(total as u64, u64::from(n) * u64::from(n - 1) / 2);
        assert_eq!(
            plan.coverage.node_pairs_covered,
            plan.coverage.node_pairs_total
        );
    }
}

#[test]
fn every_pattern_keeps_nics_disjoint_within_a_round() {
    let inv = pod(70, 4);
    let s = suite(
        &inv,
        "  - name: rp\n    perftest: {tool: ib_write_bw, size: 1M}\n    pattern: rail-pairs\n\
         \x20 - name: rnd\n    perftest: {tool: ib_write_bw, size: 1M}\n    pattern: {random: {rounds: 3, seed: 9}}\n\
         \x20 - name: inc\n    perftest: {tool: ib_write_bw, size: 1M}\n    pattern: {incast: {senders: 8}}\n\
         \x20 - name: pl\n    perftest: {tool: ib_write_bw, size: 1M}\n    pattern: per-leaf\n\
         \x20 - name: xl\n    perftest: {tool: ib_write_bw, size: 1M}\n    pattern: cross-leaf\n\
         \x20 - name: ar\n    nccl: {tool: all_reduce_perf, min_bytes: 8, max_bytes: 1G}\n",
    );
    let plan = build(&s, &inv, &Narrowing::default(), 1).unwrap();
    for tp in &plan.tests {
        check_rounds(&inv, &tp.rounds);
        assert!(
            !tp.rounds.is_empty(),
            "{} has no rounds",
            s.tests[tp.test].name
        );
    }
    // rail-pairs with an odd node count needs a second round for the last node.
    assert_eq!(plan.tests[0].rounds.len(), 1);
    assert_eq!(plan.tests[0].steps(), 35 * 4);
    // cross-leaf pairs never share a leaf; per-leaf pairs always do.
    for (t, same) in [(3, true), (4, false)] {
        for step in plan.tests[t].rounds.iter().flatten() {
            let Step::Pair { a, b } = step else { panic!() };
            assert_eq!(
                inv.nic_leaf(*a).unwrap().0 == inv.nic_leaf(*b).unwrap().0,
                same
            );
        }
    }
    // Incast: 70 nodes / 9 = 7 groups, on 4 rails.
    assert_eq!(plan.tests[2].steps(), 7 * 4);
    assert_eq!(plan.coverage.rails_covered, vec![0, 1, 2, 3]);
    assert_eq!(plan.coverage.nics_covered, plan.coverage.nics_total);
}

#[test]
fn narrowing_and_caps() {
    let inv = pod(16, 2);
    let s = suite(
        &inv,
        "  - name: a\n    perftest: {tool: ib_write_bw, size: 1M}\n    pattern: full-mesh\n\
         \x20 - name: b\n    perftest: {tool: ib_write_lat, size: 2}\n    pattern: rail-pairs\n",
    );
    let n = Narrowing {
        only: vec!["b".into()],
        nodes: Some("gpu[001-008]".into()),
        exclude: Some("gpu008".into()),
        skip_faults: false,
    };
    let plan = build(&s, &inv, &n, 1).unwrap();
    assert_eq!(plan.tests.len(), 1);
    // 7 nodes: 3 pairs in round one and the odd node paired in round two.
    assert_eq!(plan.tests[0].rounds.len(), 2);
    assert_eq!(plan.tests[0].steps(), (3 + 1) * 2);
    let err = build(
        &s,
        &inv,
        &Narrowing {
            only: vec!["zz".into()],
            ..Default::default()
        },
        1,
    )
    .unwrap_err();
    assert!(err.to_string().contains("no test named \"zz\""), "{err}");
    let capped = cap_rounds(vec![vec![Step::Pair { a: 0, b: 1 }; 10]], Some(4));
    assert_eq!(
        capped.iter().map(Vec::len).collect::<Vec<_>>(),
        vec![4, 4, 2]
    );
}

#[test]
fn leaf_reset_isolates_its_nics_and_the_limit_refuses_it() {
    let mut inv = pod(64, 2);
    // The generator allows one leaf's NICs (32); this pod allows half.
    assert_eq!(inv.fabric.blast_radius.max_isolated_nics, 32);
    inv.fabric.blast_radius.max_isolated_nics = 16;
    let s = suite(
        &inv,
        "  - name: bw\n    perftest: {tool: ib_write_bw, size: 1M, duration: 30s}\n    pattern: rail-pairs\n\
         \x20 - name: reset\n    fault: {leaf_reset: {switch: r0-leaf1, mode: ports_down}, during: bw, at: 5s, for: 10s}\n\
         \x20 - name: flap\n    fault: {link_flap: {target: r0-leaf1:swp33}, during: bw, at: 5s, for: 10s}\n",
    );
    let plan = build(&s, &inv, &Narrowing::default(), 1).unwrap();
    let reset = &plan.disruptions[0];
    assert_eq!(reset.isolated_nics.len(), 32);
    assert_eq!(reset.affected_nodes.len(), 32);
    assert!(
        reset.isolated_nodes.is_empty(),
        "nodes keep their rail-1 NIC"
    );
    assert!(reset
        .refused
        .as_deref()
        .unwrap_or("")
        .contains("isolates 32 NICs, limit is 16"));
    let flap = &plan.disruptions[1];
    assert!(flap.isolated_nics.is_empty());
    assert_eq!(flap.fabric_links_down, 1);
    assert!(flap.refused.is_none());
}

#[test]
fn a_spine_loss_takes_its_links_and_a_route_change_one_but_neither_isolates() {
    let inv = pod(64, 2);
    let s = suite(
        &inv,
        "  - name: bw\n    perftest: {tool: ib_write_bw, size: 1M, duration: 30s}\n    pattern: rail-pairs\n\
         \x20 - name: spine\n    fault: {spine_loss: {switch: spine1, mode: ports_down}, during: bw, at: 5s, for: 10s}\n\
         \x20 - name: route\n    fault: {route_change: {link: r0-leaf1:swp33}, during: bw, at: 5s, for: 10s}\n",
    );
    let plan = build(&s, &inv, &Narrowing::default(), 1).unwrap();
    let spine = &plan.disruptions[0];
    assert_eq!(
        (spine.action.as_str(), spine.target.as_str()),
        ("spine_loss (ports_down)", "spine1")
    );
    let links = inv.switches[inv.switch_by_name["spine1"]].links.len();
    // Every leaf of both rails has uplinks to spine1.
    assert!(links >= 4, "{links}");
    assert_eq!(spine.fabric_links_down, links);
    assert!(spine.isolated_nics.is_empty() && spine.affected_nodes.is_empty());
    assert!(spine.refused.is_none(), "{:?}", spine.refused);
    let route = &plan.disruptions[1];
    assert_eq!(
        (route.action.as_str(), route.target.as_str()),
        ("route_change", "r0-leaf1:swp33")
    );
    assert_eq!(route.fabric_links_down, 1);
    assert!(route.isolated_nics.is_empty() && route.refused.is_none());
    let text = render::to_text(&plan, &s, &inv);
    assert!(
        text.contains(&format!(
            "spine: spine_loss (ports_down) on spine1 during bw; isolates no NIC; {links} leaf-spine link(s) down"
        )),
        "{text}"
    );
    assert!(
        text.contains("route: route_change on r0-leaf1:swp33 during bw; isolates no NIC; 1 leaf-spine link(s) withdrawn from ECMP (left up)"),
        "{text}"
    );
}

#[test]
fn an_iperf_round_lasts_its_whole_seconds_plus_setup() {
    let inv = pod(4, 2);
    let s = suite(
        &inv,
        "  - name: tcp\n    iperf: {duration: 2500ms, interval: 500ms}\n    pattern: rail-pairs\n\
         \x20   repeat: 2\n",
    );
    let plan = build(&s, &inv, &Narrowing::default(), 1).unwrap();
    let tp = &plan.tests[0];
    // Rail pairs on 4 nodes: one round of 2 pairs on each of 2 rails.
    assert_eq!((tp.rounds.len(), tp.steps()), (1, 4));
    // -t 3 (2.5 s rounded up) plus a second of setup, twice.
    assert_eq!(tp.estimate, Duration::from_secs(8));
}
