//! nccl-tests parser against real outputs (`tests/fixtures/nccl/`, copied from
//! the shared fixtures, and `tests/fixtures/public/`). Expected values were read
//! from the files by hand.

use rocegate::workload::failure::{FailureClass, FailureKind};
use rocegate::workload::nccl::parse::{parse, NcclParseOptions, NcclReport, NcclResult, Transport};

fn fixture(dir: &str, name: &str) -> String {
    let path = format!("{}/tests/fixtures/{dir}/{name}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    String::from_utf8_lossy(&bytes).into_owned()
}

fn parse_file(dir: &str, name: &str) -> NcclReport {
    parse(&fixture(dir, name), &NcclParseOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn oop(r: &NcclReport, i: usize) -> &NcclResult {
    r.rows[i].out_of_place.as_ref().expect("out-of-place")
}

fn ip(r: &NcclReport, i: usize) -> &NcclResult {
    r.rows[i].in_place.as_ref().expect("in-place")
}

fn kinds(r: &NcclReport) -> Vec<FailureKind> {
    r.errors.iter().map(|e| e.kind).collect()
}

#[test]
fn all_gather_without_redop_column() {
    let r = parse_file("nccl", "all_gather_perf-superbench-a100-8gpu-noredop.txt");
    assert_eq!(r.rows.len(), 34);
    assert_eq!(r.nranks, Some(8));
    assert_eq!(r.n_gpus, Some(8));
    assert_eq!(r.validation, Some(false));
    // all_gather and alltoall print the same table: the parser does not guess.
    assert_eq!(r.collective, None);
    assert_eq!(r.collective_candidates, ["all_gather", "alltoall"]);
    assert_eq!(r.rows[0].bytes, 0);
    assert_eq!(r.rows[0].redop, None);
    assert_eq!(oop(&r, 0).time_us, Some(34.27));
    let last = r.rows.len() - 1;
    assert_eq!(r.rows[last].bytes, 8589934592);
    assert_eq!(r.rows[last].count, Some(268435456));
    assert_eq!(oop(&r, last).busbw_gbs, Some(223.39));
    assert_eq!(ip(&r, last).busbw_gbs, Some(230.07));
    assert_eq!(oop(&r, last).time_us, Some(33646.0));
    assert_eq!(oop(&r, last).wrong, None);
    assert_eq!(oop(&r, last).error, None);
    assert_eq!(r.avg_busbw_gbs, Some(58.2651));
    assert_eq!(r.out_of_bounds, Some(0));
    assert!(r.errors.is_empty(), "{:?}", r.errors);
}

#[test]
fn awsbatch_tag_output_abutting_number() {
    let r = parse_file("nccl", "all_reduce_perf-awsbatch-p5-mpirun-tagoutput.txt");
    assert_eq!(r.rows.len(), 32);
    assert_eq!(r.collective.as_deref(), Some("all_reduce"));
    assert_eq!(r.error_column.as_deref(), Some("#wrong"));
    assert_eq!(r.rows[0].bytes, 8);
    assert_eq!(r.rows[0].redop.as_deref(), Some("sum"));
    assert_eq!(r.rows[0].root, Some(-1));
    assert_eq!(oop(&r, 0).wrong, Some(0));
    let last = &r.rows[31];
    assert_eq!(last.bytes, 17179869184);
    assert_eq!(last.count, Some(4294967296));
    assert_eq!(oop(&r, 31).busbw_gbs, Some(483.05));
    assert_eq!(ip(&r, 31).busbw_gbs, Some(483.35));
    assert_eq!(r.avg_busbw_gbs, Some(156.742));
    assert_eq!(r.out_of_bounds, Some(0));
    assert!(r.complete);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
}

#[test]
fn awsome_eks_cut_with_ellipsis() {
    let r = parse_file(
        "nccl",
        "all_reduce_perf-awsome-eks-mpirun-tagoutput-cut.txt",
    );
    assert_eq!(r.rows.len(), 7);
    assert_eq!(r.rows[0].bytes, 0);
    assert_eq!(r.rows[1].bytes, 67108864);
    assert_eq!(r.rows[6].bytes, 2147483648);
    assert_eq!(oop(&r, 6).busbw_gbs, Some(437.79));
    assert_eq!(r.avg_busbw_gbs, Some(52.9753));
}

#[test]
fn srun_label_prefix() {
    let r = parse_file(
        "nccl",
        "all_reduce_perf-awsome-p5-2node-srun-labelprefix.txt",
    );
    assert_eq!(r.rows.len(), 32);
    assert_eq!(r.rows[0].bytes, 8);
    assert_eq!(oop(&r, 0).time_us, Some(69.12));
    assert_eq!(r.rows[31].bytes, 17179869184);
    assert_eq!(oop(&r, 31).busbw_gbs, Some(487.09));
    assert_eq!(ip(&r, 31).busbw_gbs, Some(487.26));
    // Table only: no summary lines.
    assert!(!r.complete);
    assert_eq!(r.avg_busbw_gbs, None);
    assert_eq!(r.out_of_bounds, None);
    assert!(r.errors.is_empty());
}

#[test]
fn coreweave_1440_ranks_from_one_rank_line() {
    let r = parse_file("nccl", "all_reduce_perf-coreweave-gb200-1440rank-cut.txt");
    assert_eq!(r.nranks, Some(1440));
    assert_eq!(r.rows.len(), 6);
    assert_eq!(r.rows[0].bytes, 536870912);
    assert_eq!(oop(&r, 5).busbw_gbs, Some(405.74));
    assert_eq!(r.avg_busbw_gbs, Some(297.808));
    assert_eq!(r.hosts, ["slurm-gb200-218-073"]);
}

#[test]
fn float_error_column_is_informational() {
    let r = parse_file("nccl", "all_reduce_perf-deepops-k8s-2node-errorcol.txt");
    assert_eq!(r.rows.len(), 30);
    assert_eq!(r.error_column.as_deref(), Some("error"));
    assert_eq!(oop(&r, 0).error, Some(2e-7));
    assert_eq!(ip(&r, 0).error, Some(1e-7));
    assert_eq!(oop(&r, 0).wrong, None);
    assert_eq!(r.rows[29].bytes, 4294967296);
    assert_eq!(oop(&r, 29).busbw_gbs, Some(188.53));
    assert_eq!(r.avg_busbw_gbs, Some(53.7098));
    assert!(r.errors.is_empty(), "{:?}", r.errors);

    let r = parse_file("nccl", "all_reduce_perf-deepops-slurm-4node-errorcol.txt");
    assert_eq!(r.rows.len(), 13);
    assert_eq!(oop(&r, 0).error, Some(7e-7));
    assert_eq!(oop(&r, 12).error, Some(1e-6));
    assert_eq!(oop(&r, 12).busbw_gbs, Some(191.05));
    assert_eq!(r.avg_busbw_gbs, Some(113.289));
    assert!(r.errors.is_empty());
}

#[test]
fn efa_debug_log_with_interleaved_info() {
    let r = parse_file(
        "nccl",
        "all_reduce_perf-eks-efa-2node-16gpu-debug-info-tagoutput.txt",
    );
    assert_eq!(r.nranks, Some(16));
    assert_eq!(r.rows.len(), 30);
    assert_eq!(r.rows[0].bytes, 8);
    assert_eq!(oop(&r, 0).time_us, Some(179.1));
    assert_eq!(r.rows[29].bytes, 4294967296);
    assert_eq!(oop(&r, 29).busbw_gbs, Some(43.81));
    assert_eq!(r.avg_busbw_gbs, Some(11.2432));
    assert_eq!(r.nccl_version.as_deref(), Some("2.9.9+cuda11.2"));
    assert_eq!(r.network.as_deref(), Some("AWS Libfabric"));
    // EFA is neither NET/IB nor NET/Socket.
    assert_eq!(r.transport, None);
    assert!(r.hcas.is_empty());
    assert_eq!(r.hosts.len(), 2);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
}

#[test]
fn pkb_validation_off_na_and_wide_times() {
    let r = parse_file("nccl", "all_reduce_perf-pkb-2node-k80-mpi.txt");
    assert_eq!(r.nranks, Some(2));
    assert_eq!(r.hosts, ["pkb-2b6a393d-2", "pkb-2b6a393d-3"]);
    assert_eq!(r.rows.len(), 11);
    assert_eq!(oop(&r, 0).wrong, None);
    assert_eq!(r.rows[10].bytes, 1073741824);
    assert_eq!(oop(&r, 10).time_us, Some(1752724.0));
    assert_eq!(ip(&r, 10).time_us, Some(1763386.0));
    assert_eq!(r.avg_busbw_gbs, Some(0.565546));
}

#[test]
fn superbench_all_reduce_info_line_between_header_and_rows() {
    let r = parse_file(
        "nccl",
        "all_reduce_perf-superbench-a100-8gpu-validation0.txt",
    );
    assert_eq!(r.rows.len(), 34);
    assert_eq!(r.collective.as_deref(), Some("all_reduce"));
    assert_eq!(r.rows[0].bytes, 0);
    assert_eq!(r.rows[1].bytes, 0);
    assert_eq!(r.rows[2].bytes, 4);
    assert_eq!(oop(&r, 33).busbw_gbs, Some(235.26));
    assert_eq!(r.avg_busbw_gbs, Some(68.4048));
}

#[test]
fn alltoall_blank_redop() {
    let r = parse_file("nccl", "alltoall_perf-superbench-a100-8gpu-blankredop.txt");
    assert_eq!(r.rows.len(), 34);
    assert_eq!(r.rows[0].redop, None);
    assert_eq!(oop(&r, 0).time_us, Some(1.63));
    assert_eq!(ip(&r, 0).time_us, Some(1.38));
    assert_eq!(oop(&r, 33).busbw_gbs, Some(224.31));
    assert_eq!(ip(&r, 33).busbw_gbs, Some(226.16));
    assert_eq!(r.avg_busbw_gbs, Some(58.6481));
}

#[test]
fn broadcast_root_no_redop() {
    let r = parse_file("nccl", "broadcast_perf-superbench-a100-8gpu-root.txt");
    assert_eq!(r.collective.as_deref(), Some("broadcast"));
    assert_eq!(r.rows.len(), 34);
    assert_eq!(r.rows[0].root, Some(0));
    assert_eq!(r.rows[0].redop, None);
    assert_eq!(r.avg_busbw_gbs, Some(64.8653));
}

#[test]
fn reduce_redop_and_root() {
    let r = parse_file("nccl", "reduce_perf-superbench-a100-8gpu-redop-root.txt");
    assert_eq!(r.collective.as_deref(), Some("reduce"));
    assert_eq!(r.rows.len(), 34);
    assert_eq!(r.rows[33].redop.as_deref(), Some("sum"));
    assert_eq!(r.rows[33].root, Some(0));
    assert_eq!(oop(&r, 33).busbw_gbs, Some(228.38));
    assert_eq!(r.avg_busbw_gbs, Some(65.018));
}

#[test]
fn reduce_scatter_count_is_split() {
    let r = parse_file("nccl", "reduce_scatter_perf-superbench-a100-8gpu.txt");
    assert_eq!(r.collective.as_deref(), Some("reduce_scatter"));
    assert_eq!(r.rows.len(), 34);
    assert_eq!(r.rows[33].count, Some(268435456));
    assert_eq!(oop(&r, 33).busbw_gbs, Some(231.52));
    assert_eq!(r.avg_busbw_gbs, Some(60.168));
}

#[test]
fn completion_error_wrapped_warn() {
    let r = parse_file("nccl", "nccl_debug-netib-completion-error12-wrapped.txt");
    assert!(r.rows.is_empty());
    assert_eq!(kinds(&r), [FailureKind::CompletionError]);
    let e = &r.errors[0];
    assert_eq!(e.class, FailureClass::Fabric);
    assert!(e.message.contains("with error 12"), "{}", e.message);
    // The second half of the hard-wrapped line is joined back.
    assert!(e.message.contains("vendor err 129"), "{}", e.message);
}

#[test]
fn socket_connect_refused() {
    let r = parse_file("nccl", "nccl_debug-socket-connect-refused.txt");
    assert_eq!(kinds(&r), [FailureKind::ConnectionRefused]);
    assert_eq!(r.errors[0].class, FailureClass::Infrastructure);
    assert!(r.errors[0].message.contains("10.148.3.247<56821>"));
}

#[test]
fn debug_lines_give_transport_and_hcas() {
    let table = fixture("nccl", "all_reduce_perf-pkb-2node-k80-mpi.txt");
    let ib = "gpu1:10:10 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n\
              gpu1:10:10 [0] NCCL INFO Using network IB\n\
              gpu1:10:40 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n";
    let r = parse(&format!("{ib}{table}"), &NcclParseOptions::default()).unwrap();
    assert_eq!(r.transport, Some(Transport::Ib));
    assert_eq!(r.hcas, ["mlx5_0:1/RoCE", "mlx5_3:1/RoCE"]);
    assert!(r.errors.is_empty(), "{:?}", r.errors);

    let sock = "gpu1:10:10 [0] NCCL INFO NET/IB : No device found.\n\
                gpu1:10:10 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n\
                gpu1:10:10 [0] NCCL INFO Using network Socket\n";
    let r = parse(&format!("{sock}{table}"), &NcclParseOptions::default()).unwrap();
    assert_eq!(r.transport, Some(Transport::Socket));
    assert_eq!(r.rows.len(), 11, "rows are still reported");
    assert_eq!(kinds(&r), [FailureKind::SocketFallback]);
    assert_eq!(r.errors[0].class, FailureClass::Fabric);
    assert!(r.errors[0].message.contains("No device") || r.errors[0].message.contains("no device"));
}

#[test]
fn wrong_results_and_out_of_bounds() {
    let text = fixture(
        "public",
        "all_reduce_perf-ncclt2.19.7-h200-step-bytes-2rows-cut-no-footer.txt",
    )
    .replace("  356.04       0", "  356.04       7")
        + "# Out of bounds values : 7 FAILED\n# Avg bus bandwidth    : 355.1 \n";
    let r = parse(&text, &NcclParseOptions::default()).unwrap();
    assert_eq!(oop(&r, 0).wrong, Some(7));
    assert_eq!(r.out_of_bounds, Some(7));
    assert_eq!(
        kinds(&r),
        [FailureKind::OutOfBounds, FailureKind::WrongResults]
    );
    assert!(r.errors.iter().all(|e| e.class == FailureClass::Fabric));
}

#[test]
fn timeout_class_depends_on_rows() {
    let opts = NcclParseOptions {
        killed_by_timeout: true,
    };
    let cut = fixture(
        "public",
        "all_reduce_perf-ncclt2.19.7-h200-step-bytes-2rows-cut-no-footer.txt",
    );
    let r = parse(&cut, &opts).unwrap();
    let t = r
        .errors
        .iter()
        .find(|e| e.kind == FailureKind::Timeout)
        .unwrap();
    assert_eq!(t.class, FailureClass::Fabric);
    let header_only: String = cut.lines().take(13).map(|l| format!("{l}\n")).collect();
    let r = parse(&header_only, &opts).unwrap();
    assert!(r.rows.is_empty());
    let t = r
        .errors
        .iter()
        .find(|e| e.kind == FailureKind::Timeout)
        .unwrap();
    assert_eq!(t.class, FailureClass::Infrastructure);
}

#[test]
fn not_nccl_is_a_clean_error() {
    let e = parse("hello\nworld\n", &NcclParseOptions::default()).unwrap_err();
    assert!(e.to_string().starts_with("not nccl-tests output: "), "{e}");
}

// Files collected from public sources by another helper (tests/fixtures/public/).

#[test]
fn public_cuda_failure_after_header() {
    let r = parse_file(
        "public",
        "all_reduce_perf-ncclt2.19.7-h200-cuda-illegal-address-test-failure.txt",
    );
    assert!(r.rows.is_empty());
    assert_eq!(r.collective.as_deref(), Some("all_reduce"));
    assert_eq!(r.collective_source.as_deref(), Some("banner"));
    assert_eq!(r.nranks, Some(4));
    assert_eq!(kinds(&r), [FailureKind::CudaFailure]);
    assert!(r.errors[0]
        .message
        .contains("an illegal memory access was encountered"));
}

#[test]
fn public_cut_without_footer() {
    let r = parse_file(
        "public",
        "all_reduce_perf-ncclt2.19.7-h200-step-bytes-2rows-cut-no-footer.txt",
    );
    assert_eq!(r.rows.len(), 2);
    assert!(!r.complete);
    assert!(!r.warnings.is_empty());
    assert_eq!(r.rows[0].bytes, 1073741824);
    assert_eq!(oop(&r, 0).time_us, Some(4523.62));
    assert_eq!(oop(&r, 0).algbw_gbs, Some(237.36));
    assert_eq!(oop(&r, 0).busbw_gbs, Some(356.04));
    assert_eq!(r.rows[1].bytes, 1074790400);
    assert_eq!(ip(&r, 1).busbw_gbs, Some(354.92));
    assert_eq!(r.nccl_tests_version.as_deref(), Some("2.19.7"));
}

#[test]
fn public_alltoall_mpi_warnings_redop_none() {
    let r = parse_file(
        "public",
        "alltoall_perf-ncclt2.18.3-nccl2.30.3-16rank-mpi-warnings-redop-none-inplace-na.txt",
    );
    assert_eq!(r.collective.as_deref(), Some("alltoall"));
    assert_eq!(r.nranks, Some(16));
    assert_eq!(r.nccl_version.as_deref(), Some("2.30.3+cuda13.0"));
    assert_eq!(r.rows.len(), 24);
    assert_eq!(r.rows[0].redop.as_deref(), Some("none"));
    let last = r.rows.len() - 1;
    assert_eq!(r.rows[last].bytes, 8589934592);
    assert_eq!(oop(&r, last).time_us, Some(246641.0));
    assert_eq!(oop(&r, last).algbw_gbs, Some(34.83));
    assert_eq!(oop(&r, last).busbw_gbs, Some(32.65));
    assert_eq!(oop(&r, last).wrong, Some(0));
    assert_eq!(ip(&r, last).busbw_gbs, Some(33.74));
    assert_eq!(ip(&r, last).wrong, None);
    assert_eq!(r.avg_busbw_gbs, Some(8.9909));
    assert_eq!(r.out_of_bounds, Some(0));
    assert!(r.errors.is_empty(), "{:?}", r.errors);
}

#[test]
fn every_nccl_fixture_parses() {
    for dir in ["nccl", "public"] {
        let path = format!("{}/tests/fixtures/{dir}", env!("CARGO_MANIFEST_DIR"));
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            // public/ also holds perftest and counter outputs (the latter
            // read by tests/parse_counters.rs); nccl-tests files name a
            // `*_perf` binary.
            let foreign = dir == "public" && !name.contains("_perf");
            if name.starts_with("ib_") || name.ends_with(".md") || foreign {
                continue;
            }
            let r = parse_file(dir, &name);
            assert!(
                !r.rows.is_empty() || !r.errors.is_empty(),
                "{name}: no rows and no error"
            );
        }
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    const FILES: [&str; 5] = [
        "all_reduce_perf-awsbatch-p5-mpirun-tagoutput.txt",
        "all_reduce_perf-eks-efa-2node-16gpu-debug-info-tagoutput.txt",
        "alltoall_perf-superbench-a100-8gpu-blankredop.txt",
        "nccl_debug-netib-completion-error12-wrapped.txt",
        "all_reduce_perf-deepops-k8s-2node-errorcol.txt",
    ];

    fn check(text: &str) {
        match parse(text, &NcclParseOptions::default()) {
            Ok(r) => {
                serde_json::to_string(&r).expect("report encodes");
            }
            Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
        }
    }

    proptest! {
        #[test]
        fn truncated_never_panics(file in 0..FILES.len(), cut in 0.0f64..1.0) {
            let text = fixture("nccl", FILES[file]);
            let mut at = (text.len() as f64 * cut) as usize;
            while !text.is_char_boundary(at) { at -= 1; }
            check(&text[..at]);
        }

        #[test]
        fn shuffled_lines_never_panic(file in 0..FILES.len(), seed in any::<u64>()) {
            let text = fixture("nccl", FILES[file]);
            let mut lines: Vec<&str> = text.lines().collect();
            let mut s = seed | 1;
            for i in (1..lines.len()).rev() {
                s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                lines.swap(i, (s % (i as u64 + 1)) as usize);
            }
            check(&lines.join("\n"));
        }

        #[test]
        fn random_text_never_panics(text in "(?s).{0,400}") {
            check(&text);
        }

        #[test]
        fn table_like_noise_never_panics(rows in proptest::collection::vec(
            "[ 0-9.#a-zA-Z/*:-]{0,100}", 0..30)) {
            let text = format!(
                "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n{}",
                rows.join("\n")
            );
            check(&text);
        }
    }
}

/// Impossible values embedded in real outputs: a row with one makes the
/// report `unrecognised` (its first error) with a reason naming the row and
/// the value, and the same row with a possible value still parses.
mod impossible {
    use super::*;
    use proptest::prelude::*;

    /// Columns `size count type redop time algbw busbw error time algbw busbw error`.
    const FILE: &str = "all_reduce_perf-deepops-k8s-2node-errorcol.txt";

    fn rows(lines: &[String]) -> Vec<usize> {
        (0..lines.len())
            .filter(|&i| {
                let t: Vec<&str> = lines[i].split_whitespace().collect();
                t.len() == 12 && t[0].bytes().all(|b| b.is_ascii_digit()) && t[2] == "float"
            })
            .collect()
    }

    fn with_cell(row: usize, col: usize, tok: &str) -> (String, String) {
        let text = fixture("nccl", FILE);
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let all = rows(&lines);
        let i = all[row % all.len()];
        let mut toks: Vec<String> = lines[i].split_whitespace().map(str::to_string).collect();
        toks[col] = tok.to_string();
        let bytes = toks[0].clone();
        lines[i] = format!("  {}", toks.join("   "));
        (lines.join("\n"), bytes)
    }

    fn assert_rejected(text: &str, at: &str, tok: &str) -> NcclReport {
        let r = parse(text, &NcclParseOptions::default()).expect("still nccl-tests output");
        let e = &r.errors[0];
        assert_eq!(e.kind, FailureKind::Unrecognised, "{:?}", r.errors);
        let want = format!("{at}: {tok}");
        assert!(e.message.starts_with(&want), "{} (want {want})", e.message);
        assert!(e.message.contains("is not a possible"), "{}", e.message);
        r
    }

    fn non_finite() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("nan".to_string()),
            Just("-nan".to_string()),
            Just("inf".to_string()),
            Just("-inf".to_string()),
        ]
    }

    fn negative() -> impl Strategy<Value = String> {
        (0.01f64..1e5).prop_map(|v| format!("-{v:.2}"))
    }

    #[test]
    fn the_largest_row_with_a_negative_busbw() {
        let (text, bytes) = with_cell(usize::MAX, 6, "-5.00");
        let r = assert_rejected(&text, &format!("row {bytes} bytes, out-of-place"), "-5.00");
        assert_eq!(
            r.errors[0].message,
            format!("row {bytes} bytes, out-of-place: -5.00 GB/s is not a possible bus bandwidth (negative)")
        );
        assert!(r.rows.iter().all(|x| x.bytes.to_string() != bytes));
    }

    #[test]
    fn summary_lines() {
        let text = fixture("nccl", FILE);
        let bad = text.replace(
            "# Avg bus bandwidth    : 53.7098",
            "# Avg bus bandwidth    : 1e308",
        );
        let r = assert_rejected(&bad, "# Avg bus bandwidth", "1e308 GB/s");
        assert_eq!(r.avg_busbw_gbs, None);
        let bad = text.replace(
            "# Out of bounds values : 0 OK",
            "# Out of bounds values : -3 OK",
        );
        assert_rejected(&bad, "# Out of bounds values", "-3");
    }

    #[test]
    fn a_nan_data_check_error_is_wrong_results_not_impossible() {
        let (text, _) = with_cell(0, 7, "nan");
        let r = parse(&text, &NcclParseOptions::default()).unwrap();
        assert!(r.impossible.is_empty());
        assert_eq!(kinds(&r), [FailureKind::WrongResults]);
        let (text, bytes) = with_cell(0, 7, "-1e-07");
        assert_rejected(&text, &format!("row {bytes} bytes, out-of-place"), "-1e-07");
    }

    proptest! {
        #[test]
        fn impossible_bandwidth(
            row in 0usize..100,
            col in prop_oneof![Just(5usize), Just(6), Just(9), Just(10)],
            tok in prop_oneof![
                non_finite(),
                negative(),
                Just("1e308".to_string()),
                (10_001.0f64..1e12).prop_map(|v| format!("{v:.2}")),
            ]
        ) {
            let (text, bytes) = with_cell(row, col, &tok);
            let place = if col < 8 { "out-of-place" } else { "in-place" };
            assert_rejected(&text, &format!("row {bytes} bytes, {place}"), &tok);
        }

        #[test]
        fn impossible_time(
            row in 0usize..100,
            col in prop_oneof![Just(4usize), Just(8)],
            tok in prop_oneof![
                non_finite(),
                negative(),
                (4e9f64..1e300).prop_map(|v| format!("{v:.2}")),
            ]
        ) {
            let (text, bytes) = with_cell(row, col, &tok);
            let place = if col < 8 { "out-of-place" } else { "in-place" };
            assert_rejected(&text, &format!("row {bytes} bytes, {place}"), &tok);
        }

        #[test]
        fn impossible_size_or_count(row in 0usize..100, col in 0usize..2, n in 1u64..1 << 40) {
            let tok = format!("-{n}");
            let (text, _) = with_cell(row, col, &tok);
            let r = parse(&text, &NcclParseOptions::default()).unwrap();
            prop_assert_eq!(r.errors[0].kind, FailureKind::Unrecognised);
            prop_assert!(r.errors[0].message.contains(&format!("{tok} is not a possible")), "{}", r.errors[0].message);
        }

        #[test]
        fn possible_values_in_the_same_rows_still_parse(row in 0usize..100, v in 0.0f64..5000.0) {
            let want = parse_file("nccl", FILE).rows.len();
            let tok = format!("{v:.2}");
            let (text, bytes) = with_cell(row, 6, &tok);
            let r = parse(&text, &NcclParseOptions::default()).unwrap();
            prop_assert!(r.errors.is_empty(), "{:?}", r.errors);
            prop_assert_eq!(r.rows.len(), want);
            let got = r.rows.iter().find(|x| x.bytes.to_string() == bytes).unwrap();
            prop_assert_eq!(got.out_of_place.as_ref().unwrap().busbw_gbs, Some(tok.parse::<f64>().unwrap()));
        }
    }
}
