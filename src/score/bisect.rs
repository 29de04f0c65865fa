//! Bisection of a failing collective: which nodes make it fail. Adaptive
//! group testing over node sets (every subset keeps every rail: only nodes
//! are split), as a state machine the engine drives: `next_run` names the next
//! set to run, `record` takes whether it failed.
//!
//! - A set known to fail is halved and its first half run. If the half
//!   fails, the other half's state is unknown; if it passes, the other
//!   half must hold the culprit (inferred, not run).
//! - One node cannot run a collective over the network alone: it is run
//!   with a reference node that passed before. A single node is named only
//!   when that run fails, so an inference never names a node by itself.
//! - Whenever no set is known to fail, every set still unknown is run as
//!   one: passing, all of it is cleared at once.
//!
//! One culprit among N nodes takes ⌈log2 N⌉ + 2 runs at most (the halves,
//! one run of the untested halves to find a reference, the node with its
//! reference); d culprits take about d·log2(N/d) + O(d).
//!
//! What bisection cannot find: a failure that needs the whole collective
//! (congestion only at full scale, a defect under full-scale load, a
//! timeout that scales with N). Then every half passes and nothing is
//! named; `Outcome::not_reproduced` says so.

/// What to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Run the collective on these nodes (indices as given to `new`).
    Run(Vec<usize>),
    Done,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Nodes that failed with a healthy reference.
    pub culprits: Vec<usize>,
    /// Sets that failed but could not be split further for want of a
    /// healthy reference node.
    pub unresolved: Vec<Vec<usize>>,
    /// Every run: its nodes and whether it failed.
    pub runs: Vec<(Vec<usize>, bool)>,
    /// True when the sets that failed could not be narrowed to any node:
    /// every half passed.
    pub not_reproduced: bool,
}

#[derive(Debug)]
struct Pending {
    nodes: Vec<usize>,
    /// The half not run: bad if this one passes.
    sibling: Option<Vec<usize>>,
    /// The node under test, when it runs with the reference.
    single: Option<usize>,
    /// A lone unknown node run with the first node of a failing set, for
    /// want of a reference: the rest of that set.
    probe: Option<Vec<usize>>,
}

#[derive(Debug)]
pub struct Bisection {
    bad: Vec<Vec<usize>>,
    unknown: Vec<Vec<usize>>,
    reference: Option<usize>,
    pending: Option<Pending>,
    out: Outcome,
    /// Runs allowed (the budget); past it, what is left is unresolved.
    budget: usize,
}

impl Bisection {
    /// `nodes` failed together; at most `budget` runs follow.
    pub fn new(nodes: Vec<usize>, budget: usize) -> Bisection {
        Bisection {
            bad: vec![nodes],
            unknown: Vec::new(),
            reference: None,
            pending: None,
            out: Outcome::default(),
            budget,
        }
    }

    fn run(
        &mut self,
        nodes: Vec<usize>,
        sibling: Option<Vec<usize>>,
        single: Option<usize>,
    ) -> Next {
        self.pending = Some(Pending {
            nodes: nodes.clone(),
            sibling,
            single,
            probe: None,
        });
        Next::Run(nodes)
    }

    pub fn next_run(&mut self) -> Next {
        if let Some(p) = &self.pending {
            return Next::Run(p.nodes.clone());
        }
        loop {
            if self.out.runs.len() >= self.budget {
                self.out.unresolved.append(&mut self.bad);
                return Next::Done;
            }
            if let Some(s) = self.bad.pop() {
                if s.len() == 1 {
                    // Inferred bad, never run alone: run it with the reference.
                    match self.reference {
                        Some(r) => return self.run(vec![s[0], r], None, Some(s[0])),
                        None if !self.unknown.is_empty() => {
                            self.bad.push(s);
                            return self.merged();
                        }
                        None => {
                            self.out.unresolved.push(s);
                            continue;
                        }
                    }
                }
                let (a, b) = s.split_at(s.len() / 2);
                // Run the half that can run alone (of three, the two).
                let (a, b) = if a.len() < 2 && b.len() >= 2 {
                    (b.to_vec(), a.to_vec())
                } else {
                    (a.to_vec(), b.to_vec())
                };
                if a.len() >= 2 {
                    return self.run(a, Some(b), None);
                }
                match self.reference {
                    Some(r) => return self.run(vec![a[0], r], Some(b), Some(a[0])),
                    None if !self.unknown.is_empty() => {
                        self.bad.push(s);
                        return self.merged();
                    }
                    None => {
                        self.out.unresolved.push(s);
                        continue;
                    }
                }
            }
            if !self.unknown.is_empty() {
                return self.merged();
            }
            return Next::Done;
        }
    }

    /// Every unknown set as one run.
    fn merged(&mut self) -> Next {
        let mut all: Vec<usize> = self.unknown.drain(..).flatten().collect();
        all.sort_unstable();
        if all.len() == 1 {
            if let Some(r) = self.reference {
                let x = all[0];
                return self.run(vec![x, r], None, Some(x));
            }
            // One node, no reference: run it with the first node of a
            // failing set. Passing, both are healthy and the node is the
            // reference; failing, the culprit is among the two.
            if let Some(set) = self.bad.pop() {
                let (x, rest) = (set[0], set[1..].to_vec());
                let nodes = vec![all[0], x];
                self.pending = Some(Pending {
                    nodes: nodes.clone(),
                    sibling: None,
                    single: None,
                    probe: Some(rest),
                });
                return Next::Run(nodes);
            }
            self.out.unresolved.push(all);
            return self.next_run();
        }
        self.run(all, None, None)
    }

    /// Whether the run `next_run` named failed.
    pub fn record(&mut self, failed: bool) {
        let Some(p) = self.pending.take() else {
            return;
        };
        self.out.runs.push((p.nodes.clone(), failed));
        if let Some(rest) = p.probe {
            if failed {
                self.bad.push(p.nodes);
                if !rest.is_empty() {
                    self.unknown.push(rest);
                }
            } else {
                self.reference = p.nodes.first().copied();
                if !rest.is_empty() {
                    self.bad.push(rest);
                }
            }
            return;
        }
        match (failed, p.single) {
            (true, Some(x)) => self.out.culprits.push(x),
            (true, None) => self.bad.push(p.nodes.clone()),
            (false, single) => {
                if self.reference.is_none() {
                    self.reference = p.nodes.iter().copied().find(|n| Some(*n) != single);
                    if single.is_none() {
                        self.reference = p.nodes.first().copied();
                    }
                }
            }
        }
        if let Some(b) = p.sibling {
            if failed {
                self.unknown.push(b);
            } else {
                self.bad.push(b);
            }
        }
    }

    pub fn outcome(mut self) -> Outcome {
        self.out.culprits.sort_unstable();
        self.out.not_reproduced = self.out.culprits.is_empty() && self.out.unresolved.is_empty();
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bisects `n` nodes where a run fails when it holds a culprit.
    fn bisect(n: usize, culprits: &[usize]) -> Outcome {
        let mut b = Bisection::new((0..n).collect(), 10_000);
        while let Next::Run(nodes) = b.next_run() {
            b.record(nodes.iter().any(|x| culprits.contains(x)));
        }
        b.outcome()
    }

    fn log2_ceil(n: usize) -> usize {
        (usize::BITS - (n - 1).leading_zeros()) as usize
    }

    #[test]
    fn one_culprit_in_log2_n_plus_two_runs_wherever_it_is() {
        for n in [3usize, 5, 16, 17, 100, 1024] {
            for c in [0, n / 3, n / 2, n - 1] {
                let o = bisect(n, &[c]);
                assert_eq!(o.culprits, vec![c], "n {n} culprit {c}");
                assert!(
                    o.runs.len() <= log2_ceil(n) + 2,
                    "n {n} culprit {c}: {} runs",
                    o.runs.len()
                );
            }
        }
    }

    #[test]
    fn several_culprits_are_all_found() {
        for culprits in [vec![3, 700], vec![0, 1], vec![10, 11, 500, 1023]] {
            let o = bisect(1024, &culprits);
            assert_eq!(o.culprits, culprits);
            let d = culprits.len();
            let bound = d * (log2_ceil(1024 / d) + 4);
            assert!(o.runs.len() <= bound, "{culprits:?}: {} runs", o.runs.len());
        }
    }

    #[test]
    fn a_failure_only_the_whole_shows_names_nobody() {
        let mut b = Bisection::new((0..64).collect(), 100);
        while let Next::Run(nodes) = b.next_run() {
            b.record(nodes.len() == 64);
        }
        let o = b.outcome();
        assert!(o.culprits.is_empty());
        assert!(o.not_reproduced);
    }

    #[test]
    fn two_nodes_cannot_be_told_apart_without_a_third() {
        let o = bisect(2, &[0]);
        assert!(o.culprits.is_empty());
        assert_eq!(o.unresolved, vec![vec![0, 1]]);
    }

    #[test]
    fn every_node_bad_is_unresolved_not_invented() {
        let o = bisect(4, &[0, 1, 2, 3]);
        assert!(o.culprits.is_empty());
        assert!(!o.unresolved.is_empty());
    }

    #[test]
    fn the_budget_stops_it() {
        let mut b = Bisection::new((0..1024).collect(), 3);
        let mut runs = 0;
        while let Next::Run(nodes) = b.next_run() {
            runs += 1;
            b.record(nodes.contains(&5));
        }
        assert_eq!(runs, 3);
        assert!(!b.outcome().unresolved.is_empty());
    }
}
