//! Every Performance Profile Creator case in `testdata/fixtures/ppc-expected/` reproduced from
//! the real must-gathers: the CPU sets here; the whole PerformanceProfile in the render crate.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use plan::layout::Layout;
use plan::ppc::{calculate, PpcInput};

/// The repository's `testdata/` (public fixtures and CRD schemas; see `testdata/NOTICE.md`).
fn testdata_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata"))
}

fn host(mg: &str, node: &str) -> host::Host {
    let dir = testdata_dir().join("fixtures/must-gather").join(mg);
    let root = host::Root::must_gather(Path::new(&dir), Some(node)).unwrap();
    host::read(&root)
}

#[test]
fn real_worker1_layout() {
    let l = Layout::from_host(&host("must-gather.bare-metal", "worker1"));
    assert_eq!(l.describe(), "2 NUMA nodes, 40 cores, 80 CPUs (2 threads/core)");
    assert_eq!(l.nodes[0].cores[1].cpus, vec![2, 42]);
    assert_eq!(l.nodes[0].cores[1].core_id, 4);
    let l = Layout::from_host(&host("must-gather.sno", "ocp47sno-master-0.demo.lab"));
    assert_eq!(l.describe(), "1 NUMA node, 12 cores, 12 CPUs (1 thread/core)");
}

#[test]
fn ppc_cpu_sets_match_the_fixtures() {
    let w1 = Layout::from_host(&host("must-gather.bare-metal", "worker1"));
    let sno = Layout::from_host(&host("must-gather.sno", "ocp47sno-master-0.demo.lab"));
    let case = |l: &Layout, r, split, dht| {
        let p = calculate(
            l,
            &PpcInput {
                reserved_cpu_count: r,
                split_reserved_cpus_across_numa: split,
                disable_ht: dht,
                ..Default::default()
            },
        )
        .unwrap();
        (p.reserved.to_list(), p.isolated.to_list())
    };
    assert_eq!(case(&w1, 4, false, false), ("0,2,40,42".into(), "1,3-39,41,43-79".into()));
    assert_eq!(case(&sno, 1, false, false), ("0".into(), "1-11".into()));
    assert_eq!(case(&w1, 5, true, true), ("0-4".into(), "5-39".into()));
    assert_eq!(
        case(&w1, 12, false, true),
        ("0,2,4,6,8,10,12,14,16,18,20,22".into(), "1,3,5,7,9,11,13,15,17,19,21,23-39".into())
    );
    assert_eq!(case(&w1, 4, true, false), ("0-1,40-41".into(), "2-39,42-79".into()));
}

/// PPC's `info --json` for every must-gather of NTO's fixture set, compared typed and whole
/// (as NTO's "describe the cluster from must-gather data in info mode" test does).
#[test]
fn ppc_info_matches_ntos_expected_json() {
    use plan::ppc::info::{cluster_info, PoolInfo};
    let nto = testdata_dir().join("fixtures/nto");
    let mut seen = 0;
    for entry in std::fs::read_dir(nto.join("must-gather")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let want_text =
            std::fs::read_to_string(nto.join("ppc-expected-info").join(format!("{name}.json")))
                .unwrap();
        let want: Vec<PoolInfo> = serde_json::from_str(&want_text).unwrap();
        let got = cluster_info(&dir).unwrap();
        // Through JSON and back, as NTO's test reads PPC's output.
        let got: Vec<PoolInfo> =
            serde_json::from_str(&serde_json::to_string(&got).unwrap()).unwrap();
        assert_eq!(got, want, "{name}");
        seen += 1;
    }
    assert_eq!(seen, 2, "NTO's fixture set has two must-gathers");
}
