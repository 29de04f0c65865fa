//! TCP ports for the servers of one round. Servers that share a host need
//! distinct ports (perftest's `-p`, iperf3's `-p`); each tool counts up from
//! its own default. This knows nothing about either tool.

use std::collections::HashMap;

/// Hands out a fresh port per server host within one round: the first server
/// on a host gets `base`, the next `base + 1`, and so on.
#[derive(Debug, Clone)]
pub struct Ports {
    base: u16,
    next: HashMap<usize, u16>,
}

impl Ports {
    /// Ports counting up from `base` on every host.
    pub fn starting_at(base: u16) -> Self {
        Ports {
            base,
            next: HashMap::new(),
        }
    }

    /// The next free port on `node` (an inventory node id).
    pub fn next(&mut self, node: usize) -> u16 {
        let p = self.next.entry(node).or_insert(self.base);
        let port = *p;
        *p = p.wrapping_add(1);
        port
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_host_counts_up_from_the_base() {
        let mut p = Ports::starting_at(5201);
        assert_eq!(p.next(0), 5201);
        assert_eq!(p.next(0), 5202);
        assert_eq!(p.next(7), 5201);
        assert_eq!(p.next(0), 5203);
    }
}
