//! (placeholder until the host parsers land)
use super::{ParseError, Reading};
pub fn parse_ethtool_stats(_t: &str) -> Result<Vec<Reading>, ParseError> {
    Ok(Vec::new())
}
pub fn parse_sysfs_counters(_t: &str) -> Result<(String, Vec<Reading>), ParseError> {
    Ok((String::new(), Vec::new()))
}
