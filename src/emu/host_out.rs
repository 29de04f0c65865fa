//! (placeholder until the host renderers land)
#![allow(dead_code)]
use super::state::{NicConfig, NicCounters};
pub fn ethtool_stats(_cfg: &NicConfig, c: &NicCounters) -> String {
    format!("NIC statistics:\n     link_down_events_phy: {}\n", c.link_down_events as u64)
}
pub fn sysfs_counters(device: &str, c: &NicCounters) -> String {
    format!("/sys/class/infiniband/{device}/ports/1/hw_counters/np_cnp_sent:{}\n", c.np_cnp_sent as u64)
}
pub fn ethtool_info(cfg: &NicConfig) -> String {
    format!("driver: mlx5_core\nfirmware-version: {}\n", cfg.firmware)
}
pub fn mlnx_qos(_cfg: &NicConfig) -> String {
    String::new()
}
pub fn lldpctl_json(_host: &str, _nics: &[&NicConfig]) -> String {
    "{}".into()
}
