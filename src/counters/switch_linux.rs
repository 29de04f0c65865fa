//! (placeholder until the switch parsers land)
use super::{ParseError, Reading};
pub fn parse_ethtool_stats(_t: &str) -> Result<Vec<Reading>, ParseError> {
    Ok(Vec::new())
}
