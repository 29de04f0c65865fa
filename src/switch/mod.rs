pub mod cumulus;
pub mod eos;
pub mod nxos;
pub mod sonic;
pub mod table;
