//! Inputs: the inventory (the pod) and the suite (what to test, what "good"
//! means). Loading is split in three, as ripgrep splits flags: YAML into plain
//! types (`inventory`, `suite`), then `check` validates them against each other
//! into a model every later stage can trust. Nothing here touches a machine.

pub mod check;
pub mod check_suite;
pub mod diag;
pub mod generate;
pub mod hostlist;
pub mod import;
pub mod inventory;
pub mod locate;
pub mod model;
pub mod names;
pub mod select;
pub mod suite;
pub mod tagged;
pub mod units;
pub mod yaml_guard;
