//! Where the inventory and suite come from: the paths given, else the
//! shipped files in the working directory, else copies built into the
//! binary, so `rocegate run` works from anywhere.

use crate::config::check::{parse_inventory, read_source};
use crate::config::check_suite::{parse_suite, Suite};
use crate::config::model::Inventory;
use crate::exit::AppError;

pub const DEFAULT_INVENTORY: &str = "inventory/emulated.yaml";
pub const DEFAULT_SUITE: &str = "suites/acceptance.yaml";

const EMBEDDED: &[(&str, &str)] = &[
    (
        "inventory/emulated.yaml",
        include_str!("../inventory/emulated.yaml"),
    ),
    (
        "inventory/emulated-defects.yaml",
        include_str!("../inventory/emulated-defects.yaml"),
    ),
    (
        "suites/acceptance.yaml",
        include_str!("../suites/acceptance.yaml"),
    ),
];

/// Reads `path`, falling back to the embedded copy of a shipped default.
pub fn read(path: Option<&str>, default: &str) -> Result<(String, String), AppError> {
    match path {
        Some(p) => read_source(p)
            .map(|t| (p.to_string(), t))
            .map_err(AppError::from),
        None => match std::fs::read_to_string(default) {
            Ok(t) => Ok((default.to_string(), t)),
            Err(_) => EMBEDDED
                .iter()
                .find(|(name, _)| *name == default)
                .map(|(name, text)| (format!("<built-in>/{name}"), text.to_string()))
                .ok_or_else(|| {
                    AppError::Input(format!("{default}: not found and no built-in copy"))
                }),
        },
    }
}

pub struct Inputs {
    pub inventory: Inventory,
    pub suite: Suite,
    pub inventory_text: String,
    pub suite_text: String,
}

/// Loads and validates both files, reporting the problems of both at once.
pub fn load(inventory: Option<&str>, suite: Option<&str>) -> Result<Inputs, AppError> {
    let (ipath, itext) = read(inventory, DEFAULT_INVENTORY)?;
    let (spath, stext) = read(suite, DEFAULT_SUITE)?;
    let inv = match parse_inventory(&ipath, &itext) {
        Ok(inv) => inv,
        Err(mut d) => {
            // The suite cannot be checked against a broken inventory, but its
            // own YAML and schema can: report both files' problems at once.
            if let Err(e) = serde_yaml::from_str::<crate::config::suite::SuiteFile>(&stext) {
                d.0.push(crate::config::diag::from_yaml_error(&spath, &e));
            }
            return Err(d.into());
        }
    };
    let suite = parse_suite(&spath, &stext, &inv)?;
    Ok(Inputs {
        inventory: inv,
        suite,
        inventory_text: itext,
        suite_text: stext,
    })
}
