//! (placeholder until the congestion model lands: never congested)
#![allow(dead_code)]
pub struct Ecn {
    pub kmin_bytes: f64,
    pub kmax_bytes: f64,
    pub pmax: f64,
}
pub struct QueueConfig {
    pub capacity_gbps: f64,
    pub mtu: u32,
    pub ecn: Option<Ecn>,
    pub pfc: bool,
    pub dcqcn: bool,
    pub buffer_bytes: f64,
    pub xoff_bytes: f64,
    pub xon_bytes: f64,
    pub base_rtt_us: f64,
}
pub struct FlowIn {
    pub offered_gbps: f64,
    pub share_gbps: f64,
    pub start_s: f64,
}
#[derive(Clone, Debug, PartialEq)]
pub struct QueueTrace {
    n: usize,
}
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueCounts {
    pub tx_pkts: f64,
    pub ecn_marked_pkts: f64,
    pub drops_pkts: f64,
    pub watermark_bytes: f64,
    pub flows: Vec<FlowCounts>,
}
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowCounts {
    pub ecn_marked_pkts: f64,
    pub cnp: f64,
    pub pause_frames: f64,
    pub pause_us: f64,
    pub drops_pkts: f64,
    pub out_of_sequence: f64,
    pub retransmitted_pkts: f64,
}
impl QueueTrace {
    pub fn simulate(_cfg: &QueueConfig, flows: &[FlowIn]) -> QueueTrace {
        QueueTrace { n: flows.len() }
    }
    pub fn congested(&self) -> bool {
        false
    }
    pub fn at(&self, _t: f64) -> QueueCounts {
        QueueCounts {
            flows: vec![FlowCounts::default(); self.n],
            ..Default::default()
        }
    }
    pub fn goodput_factor(&self) -> f64 {
        1.0
    }
    pub fn mean_queue_bytes(&self) -> f64 {
        0.0
    }
}
