//! (placeholder until the switch renderers land)
#![allow(dead_code)]
use super::state::{PortConfig, PortCounters};
pub fn ethtool_stats(_cfg: &PortConfig, c: &PortCounters) -> String {
    format!("NIC statistics:\n     tx_octets: {}\n", c.tx_bytes as u64)
}
pub fn ip_link_json(cfg: &PortConfig, _c: &PortCounters, ifindex: u32, _mac: [u8; 6]) -> String {
    format!("[{{\"ifindex\":{ifindex},\"ifname\":\"{}\"}}]", cfg.name)
}
pub fn dcb_pfc(_cfg: &PortConfig) -> String {
    String::new()
}
pub fn tc_qdisc(_cfg: &PortConfig, _c: &PortCounters) -> String {
    String::new()
}
