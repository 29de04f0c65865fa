//! `rocegate parse` recognises each tool by lines only that tool prints and
//! refuses anything else with exit 2, while the tool's own failures (a
//! perftest run that found no device) are still reports, exit 0.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(rel: &str) -> PathBuf {
    root().join("tests/fixtures").join(rel)
}

/// Exit code, stdout, stderr of `rocegate parse TOOL FILE`.
fn parse(tool: &str, file: &Path) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("rocegate")
        .expect("binary is built")
        .args(["parse", tool])
        .arg(file)
        .output()
        .expect("rocegate runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    )
}

fn refused(tool: &str, file: &Path, name: &str) {
    let (code, stdout, stderr) = parse(tool, file);
    assert_eq!(code, Some(2), "{}: {stdout}{stderr}", file.display());
    assert!(stdout.is_empty(), "nothing on stdout: {stdout}");
    assert!(
        stderr.contains(&format!("{}: not {name} output: no line", file.display())),
        "{stderr}"
    );
}

fn error_kind(tool: &str, file: &Path) -> serde_json::Value {
    let (code, stdout, stderr) = parse(tool, file);
    assert_eq!(code, Some(0), "{}: {stderr}", file.display());
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON report");
    match tool {
        "perftest" => v["error"]["kind"].clone(),
        _ => v["errors"][0]["kind"].clone(),
    }
}

#[test]
fn a_readme_is_not_perftest_nor_nccl_output() {
    // The README names every failure kind (`rdma_cm`, `completion_error`):
    // keywords alone once made it a fabric failure.
    refused("perftest", &root().join("README.md"), "perftest");
    refused("nccl", &root().join("README.md"), "nccl-tests");
    // The fixtures' README quotes real NCCL WARN and perftest lines in a
    // table: quotations are not the tool's output.
    refused("perftest", &fixture("README.md"), "perftest");
    refused("nccl", &fixture("README.md"), "nccl-tests");
}

#[test]
fn another_tools_output_is_refused() {
    refused(
        "perftest",
        &fixture("nccl/nccl_debug-socket-connect-refused.txt"),
        "perftest",
    );
    refused(
        "perftest",
        &fixture("public/all_reduce_perf-ncclt2.19.7-h200-cuda-illegal-address-test-failure.txt"),
        "perftest",
    );
    refused(
        "perftest",
        &fixture("iperf3/iperf3-3.12-connection-refused-text.stderr.txt"),
        "perftest",
    );
    refused(
        "nccl",
        &fixture("perftest/ib_write_bw-cns-roce-all-gbits-client.txt"),
        "nccl-tests",
    );
    // iperf3's JSON is refused by the --out_json reader, by its keys.
    let json = fixture("iperf3/iperf3-J-tcp-2s-veth.json");
    let (code, _, stderr) = parse("perftest", &json);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("not perftest output"), "{stderr}");
}

#[test]
fn the_tools_own_failures_are_still_reports() {
    assert_eq!(
        error_kind(
            "perftest",
            &fixture("perftest/ib_write_bw-fail-no-device-debian-perftest-4.5-rc1.txt")
        ),
        "no_device"
    );
    assert_eq!(
        error_kind(
            "nccl",
            &fixture("nccl/nccl_debug-socket-connect-refused.txt")
        ),
        "connection_refused"
    );
    assert_eq!(
        error_kind(
            "nccl",
            &fixture(
                "public/all_reduce_perf-ncclt2.19.7-h200-cuda-illegal-address-test-failure.txt"
            )
        ),
        "cuda_failure"
    );
}

#[test]
fn whole_lines_count_quotations_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    // perftest's message as it prints it, and the shell on a missing binary.
    let own = write(
        "own.txt",
        " Did not detect devices \n If device exists, check if driver is up\n",
    );
    assert_eq!(error_kind("perftest", &own), "no_device");
    let missing = write(
        "missing.txt",
        "bash: line 1: ib_write_bw: command not found\n",
    );
    assert_eq!(error_kind("perftest", &missing), "missing_binary");
    // The same words in prose, or a launcher error with no perftest in it.
    let prose = write(
        "prose.md",
        "When perftest prints `Did not detect devices`, the rdma_cm module failed to load.\n",
    );
    refused("perftest", &prose, "perftest");
    let launcher = write(
        "srun.txt",
        "srun: error: gpu01: task 0: Exited with exit code 1\n",
    );
    refused("perftest", &launcher, "perftest");
    // An NCCL line with its `[device]` tag is NCCL's; without, a quotation.
    let quoted = write(
        "quoted.txt",
        "see include/socket.h:403 NCCL WARN Connect to 10.0.0.1<1> failed : Connection refused\n",
    );
    refused("nccl", &quoted, "nccl-tests");
    let logged = write(
        "logged.txt",
        "gpu01:4242:4300 [3] include/socket.h:403 NCCL WARN Connect to 10.0.0.1<1> failed : Connection refused\n",
    );
    assert_eq!(error_kind("nccl", &logged), "connection_refused");
    let failure = write(
        "failure.txt",
        "gpu01: Test NCCL failure common.cu:1005 'unhandled system error'\n",
    );
    assert_eq!(error_kind("nccl", &failure), "nccl_failure");
    refused(
        "nccl",
        &write("says.txt", "a Test NCCL failure means the library failed\n"),
        "nccl-tests",
    );
}

#[test]
fn every_fixture_of_each_tool_is_still_recognised() {
    let dirs = [
        ("perftest", "perftest", "ib_"),
        ("perftest", "public", "ib_"),
        ("nccl", "nccl", ""),
        ("nccl", "public", "_perf"),
    ];
    let mut seen = 0;
    for (tool, dir, needle) in dirs {
        for e in std::fs::read_dir(fixture(dir)).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if !name.contains(needle) || name.ends_with(".md") {
                continue;
            }
            let (code, _, stderr) = parse(tool, &p);
            assert!(!stderr.contains(": no line "), "{}: {stderr}", p.display());
            assert!(code.is_some(), "{}", p.display());
            seen += 1;
        }
    }
    assert!(seen >= 30, "only {seen} fixtures found");
}
