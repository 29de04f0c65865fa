//! rocegate: a pre-deployment validation harness for RoCEv2 GPU fabrics.
//!
//! Data flows one way: `config` (load and validate) → `plan` (pairs, rounds,
//! coverage) → `exec` (transports) → `workload` (command lines and parsers) →
//! `score` (verdicts) → `report` (events, JSONL, JUnit, HTML). `emu` is the
//! emulated fabric; only `exec` talks to it.

pub mod app;
pub mod audit;
pub mod campaign;
pub mod cli;
pub mod config;
pub mod counters;
pub mod emu;
pub mod encode;
pub mod exec;
pub mod exit;
pub mod fault;
pub mod inputs;
pub mod paths;
pub mod plan;
pub mod plausible;
pub mod report;
pub mod rng;
pub mod runner;
pub mod score;
pub mod switch;
pub mod workload;
