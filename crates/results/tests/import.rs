//! Importers and the cyclictest exporter on real outputs of Debian 12's rt-tests 2.4 and fio
//! 3.33 (captured on the 2-vCPU dev VM; `tests/fixtures/README.md` says how each was made)
//! plus the ≥2.7 layout derived from one of them (zero rows and `# Total:` removed, as
//! rt-tests 2.7's `histogram.c` prints). Every prefix of every fixture imports as an error,
//! as `partial`, or as the whole file: a cut file never passes for a whole run.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use results::import::{cyclictest, fio, oslat};
use results::LatencyResult;

fn fixture(name: &str) -> String {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/").to_string() + name;
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// A statistic that may be unknown.
fn o(v: Option<u64>) -> String {
    v.map_or_else(|| "n/a".into(), |v| v.to_string())
}

/// A compact, stable view for snapshots (histograms summarised to keep snapshots readable).
fn view(r: &LatencyResult) -> String {
    let mut s = format!(
        "kind={} tool={} realtime={} partial={}\nparams={}\n",
        r.envelope.kind,
        r.envelope.tool,
        r.realtime,
        r.envelope.partial,
        serde_json::to_value(&r.envelope.params).unwrap_or_default()
    );
    for t in &r.threads {
        let st = &t.stats;
        s += &format!(
            "cpu={:?} tid={:?} P={:?} I={:?} count={} min={} avg={} max={} p50={} p90={} p99={} p999={} overflow={} buckets={} first={:?} last={:?}\n",
            t.cpu, t.tid, t.priority, t.interval_ns, st.count, st.min_ns, st.avg_ns, st.max_ns, o(st.p50_ns), o(st.p90_ns),
            o(st.p99_ns), o(st.p999_ns), t.histogram.overflow, t.histogram.buckets.len(),
            t.histogram.buckets.first(), t.histogram.buckets.last()
        );
    }
    for n in &r.notes {
        s += &format!("note: {n}\n");
    }
    s
}

#[test]
fn cyclictest_quiet_text() {
    let r = cyclictest::import(&fixture("cyclictest-2.4-q.txt")).unwrap();
    assert_eq!(r.threads.len(), 2);
    assert_eq!(r.threads[1].interval_ns, Some(1_500_000), "second thread runs at I:1500");
    insta::assert_snapshot!(view(&r));
}

#[test]
fn cyclictest_histogram_both_layouts_agree() {
    let old = cyclictest::import(&fixture("cyclictest-2.4-h40.txt")).unwrap();
    let new = cyclictest::import(&fixture("cyclictest-2.7-layout-h40.txt")).unwrap();
    assert_eq!(old.threads.len(), 2);
    for (a, b) in old.threads.iter().zip(&new.threads) {
        assert_eq!(a.stats, b.stats);
        assert_eq!(a.histogram.buckets, b.histogram.buckets);
    }
    assert_eq!(old.threads[0].histogram.overflow, 36);
    assert_eq!(old.threads[1].histogram.overflow, 70);
    assert_eq!(old.threads[1].stats.max_ns, 99_914_000);
    let layout = |r: &results::LatencyResult| {
        r.envelope.params.latency().and_then(|p| p.histogram_layout.clone()).unwrap_or_default()
    };
    assert!(layout(&old).contains("2.6"));
    assert!(layout(&new).contains("2.7"));
    insta::assert_snapshot!(view(&old));
}

#[test]
fn cyclictest_json_matches_text_of_the_same_run() {
    let j = cyclictest::import(&fixture("cyclictest-2.4-h100.json")).unwrap();
    let t = cyclictest::import(&fixture("cyclictest-2.4-h100.txt")).unwrap();
    let (a, b) = (&j.threads[0], &t.threads[0]);
    assert_eq!(a.cpu, Some(1));
    assert_eq!(a.stats.count, b.stats.count, "cycles = in-range + overflow");
    assert_eq!(a.histogram.overflow, b.histogram.overflow, "JSON overflow derived as cycles - sum");
    assert_eq!(a.histogram.buckets, b.histogram.buckets);
    assert_eq!((a.stats.min_ns, a.stats.max_ns), (b.stats.min_ns, b.stats.max_ns));
    assert_eq!(j.envelope.tool, "cyclictest 2.40");
    let cmdline = j.envelope.params.latency().and_then(|p| p.cmdline.clone()).unwrap_or_default();
    assert!(cmdline.starts_with("cyclictest -m -p95"), "{cmdline}");
    assert_eq!(j.envelope.host.realtime, Some(false));
    insta::assert_snapshot!(view(&j));
}

/// Found by the importers fuzzer: with `resolution_in_ns` 1, a bucket key far beyond any
/// latency (1.5e99, saturating to u64::MAX) overflowed `lo + width` and panicked. It is
/// refused as implausible, naming the value.
#[test]
fn a_ns_bucket_beyond_any_latency_is_refused() {
    let text = fixture("cyclictest-2.4-h100.json")
        .replace("\"resolution_in_ns\": 0", "\"resolution_in_ns\": 1")
        .replace("\"15\": 509", &format!("\"1{}\": 509", "5".repeat(99)));
    assert!(text.contains("\"resolution_in_ns\": 1") && text.contains("555555\": 509"));
    let e = cyclictest::import(&text).unwrap_err().to_string();
    assert!(e.contains("not a plausible latency"), "{e}");
    // The same bucket at a plausible value imports.
    let ok = text.replace(&format!("\"1{}\": 509", "5".repeat(99)), "\"15\": 509");
    assert!(cyclictest::import(&ok).is_ok());
}

#[test]
fn cyclictest_json_without_histogram() {
    let r = cyclictest::import(&fixture("cyclictest-2.4-noh.json")).unwrap();
    let t = &r.threads[0];
    assert_eq!(
        (t.stats.count, t.stats.min_ns, t.stats.max_ns, t.stats.avg_ns),
        (1982, 9_000, 9_179_000, 28_340)
    );
    assert_eq!(t.stats.p99_ns, None, "unknown, not 0");
    assert!(r.notes.iter().any(|n| n.contains("percentiles are unknown")));
}

#[test]
fn oslat_text_and_json() {
    let t = oslat::import(&fixture("oslat-2.4.txt")).unwrap();
    assert_eq!(t.envelope.kind, results::Kind::Noise);
    assert_eq!(t.threads[0].cpu, Some(1));
    assert_eq!(t.threads[0].stats.max_ns, 4_036_000);
    assert_eq!(t.threads[0].histogram.overflow, 147, "the last bucket includes overflows");
    insta::assert_snapshot!("oslat_text", view(&t));
    let two = oslat::import(&fixture("oslat-2.4-2cpu.txt")).unwrap();
    assert_eq!(two.threads.len(), 2);
    assert_eq!(two.threads.iter().map(|t| t.cpu).collect::<Vec<_>>(), vec![Some(0), Some(1)]);
    let j = oslat::import(&fixture("oslat-2.4.json")).unwrap();
    assert_eq!(j.threads[0].stats.max_ns, 138_000);
    assert_eq!(j.threads[0].histogram.overflow, 334);
    assert_eq!(
        j.threads[0].histogram.buckets[0],
        results::Bucket { lo_ns: 0, hi_ns: 1000, count: 71_501_704 }
    );
    insta::assert_snapshot!("oslat_json", view(&j));
    let z = oslat::import(&fixture("oslat-2.4-z-b64.txt")).unwrap();
    assert_eq!(z.threads[0].stats.max_ns, 205_000);
    assert_eq!(z.threads[0].histogram.overflow, 9);
}

/// The reproduction: the first 900 bytes of the h40 histogram (cut inside it) were a
/// whole run with every percentile 0; half of an oslat file the same.
#[test]
fn a_cut_histogram_is_partial_with_a_note_and_unknown_percentiles() {
    let text = fixture("cyclictest-2.4-h40.txt");
    let r = cyclictest::import(&text[..900]).unwrap();
    assert!(r.envelope.partial);
    assert!(r.notes[0].starts_with("CUT SHORT"), "{:?}", r.notes);
    for t in &r.threads {
        assert_eq!(t.stats.p99_ns, None);
        assert!(t.stats.max_ns >= 38_000, "the rows read bound the max: {}", t.stats.max_ns);
    }
    let whole = cyclictest::import(&text).unwrap();
    assert!(!whole.envelope.partial);
    assert_eq!(whole.threads[1].stats.max_ns, 99_914_000);

    let text = fixture("oslat-2.4.txt");
    let r = oslat::import(&text[..text.len() / 2]).unwrap();
    assert!(r.envelope.partial && r.notes[0].starts_with("CUT SHORT"), "{:?}", r.notes);
    assert_eq!(r.threads[0].stats.p99_ns, None);
}

/// The cut points tried: every byte near a line end (where cuts are hardest to see), every
/// fifth elsewhere (the whole sweep takes long in debug builds).
fn cuts(text: &str) -> impl Iterator<Item = usize> + '_ {
    let b = text.as_bytes();
    (0..text.len()).filter(move |c| {
        text.is_char_boundary(*c)
            && (c % 5 == 0 || b[c.saturating_sub(3)..(c + 3).min(b.len())].contains(&b'\n'))
    })
}

/// Where a cut cannot be seen: a `T:`-only output cut exactly at a line end, and the live
/// output before its `# Histogram` (no summary is expected there).
fn undetectable_cut(name: &str, text: &str, cut: usize) -> bool {
    let b = text.as_bytes();
    let at_line_end = cut == 0 || b[cut - 1] == b'\n' || b.get(cut) == Some(&b'\n');
    match name {
        "cyclictest-2.4-q.txt" => at_line_end,
        "cyclictest-2.4-live-h20.txt" => text.find("# Histogram").is_some_and(|h| cut <= h),
        _ => false,
    }
}

#[test]
fn every_prefix_is_an_error_partial_or_the_whole_run() {
    let latency = [
        "cyclictest-2.4-h40.txt",
        "cyclictest-2.7-layout-h40.txt",
        "cyclictest-2.4-h100.txt",
        "cyclictest-2.4-q.txt",
        "cyclictest-2.4-live-h20.txt",
        "cyclictest-2.4-h100.json",
        "oslat-2.4.txt",
        "oslat-2.4-2cpu.txt",
        "oslat-2.4-z-b64.txt",
        "oslat-2.4.json",
    ];
    for name in latency {
        let text = fixture(name);
        let import = |t: &str| {
            if name.starts_with("oslat") {
                oslat::import(t)
            } else {
                cyclictest::import(t)
            }
        };
        let whole = import(&text).unwrap();
        assert!(!whole.envelope.partial, "{name}: {:?}", whole.notes);
        for cut in cuts(&text) {
            if undetectable_cut(name, &text, cut) {
                continue;
            }
            if let Ok(mut r) = import(&text[..cut]) {
                // the overflows' cycle numbers (the last lines) are kept whole or not at all
                for (t, w) in r.threads.iter_mut().zip(&whole.threads) {
                    assert!(
                        t.outliers.is_none() || t.outliers == w.outliers,
                        "{name} cut at {cut}: a cut cycle-number list was kept"
                    );
                    t.outliers.clone_from(&w.outliers);
                }
                assert!(
                    r.envelope.partial || r.threads == whole.threads,
                    "{name} cut at {cut} imports as a whole run: {:?}",
                    &text[cut.saturating_sub(40)..cut]
                );
            }
        }
    }
    for name in [
        "fio-3.33-etcd.txt",
        "fio-3.33-two-jobs.txt",
        "fio-3.33-etcd.json",
        "fio-3.33-etcd-normal-json.txt",
    ] {
        let text = fixture(name);
        let whole = fio::import(&text).unwrap();
        assert!(!whole.envelope.partial, "{name}");
        for cut in cuts(&text) {
            if let Ok(r) = fio::import(&text[..cut]) {
                assert!(
                    r.envelope.partial || r.scenarios == whole.scenarios,
                    "{name} cut at {cut} imports as a whole run: {:?}",
                    &text[cut.saturating_sub(40)..cut]
                );
            }
        }
    }
}

#[test]
fn live_output_with_a_histogram() {
    let r = cyclictest::import(&fixture("cyclictest-2.4-live-h20.txt")).unwrap();
    assert_eq!(r.threads.len(), 2);
    let t = &r.threads[1];
    assert_eq!((t.stats.count, t.histogram.overflow, t.stats.max_ns), (300, 294, 77_000));
    assert_eq!(t.tid, Some(31516));
    assert!(!r.notes.iter().any(|n| n.contains("cycles but")), "{:?}", r.notes);
}

#[test]
fn fio_text_json_and_mixed_outputs_agree() {
    let text = fio::import(&fixture("fio-3.33-etcd.txt")).unwrap();
    let json = fio::import(&fixture("fio-3.33-etcd.json")).unwrap();
    let mixed = fio::import(&fixture("fio-3.33-etcd-normal-json.txt")).unwrap();
    assert_eq!(text.envelope.tool, "fio 3.33");
    let format = |r: &results::fsync::FsyncResult| match &r.envelope.params {
        results::Params::Fsync(p) => p.format.clone().unwrap_or_default(),
        _ => String::new(),
    };
    assert_eq!(format(&text), "text");
    assert_eq!(format(&json), "json");
    assert_eq!(format(&mixed), "normal,json");
    // The text of fio-3.33-etcd.txt, as fio printed it (sync in µs).
    let s = &text.scenarios[0];
    assert_eq!((s.name.as_str(), s.ops), ("etcd", 911));
    assert_eq!((s.lat_ns.min, s.lat_ns.max), (77_000, 72_501_000));
    assert_eq!((s.lat_ns.p50, s.lat_ns.p99, s.lat_ns.p9999), (3_982_000, 16_188_000, 72_877_000));
    assert_eq!(s.duration_ns, 4_421_000_000);
    // JSON keeps ns and fio's own count.
    assert!(json.ops > 0 && json.lat_ns.p99 > 0 && json.lat_ns.p50 <= json.lat_ns.p99);
    assert_eq!(mixed.ops, 911);
    insta::assert_snapshot!("fio_text", format!("{:#?}", text.scenarios[0]));
}

#[test]
fn fio_two_jobs_and_lat_percentiles() {
    let r = fio::import(&fixture("fio-3.33-two-jobs.txt")).unwrap();
    let names: Vec<&str> = r.scenarios.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["etcd-fdatasync", "wal-fsync"]);
    assert_eq!(r.scenarios[1].ops, 455, "fsync=1 counts its syncs in `issued rwts`");
    assert_eq!(r.scenarios[0].lat_ns.max, 17_243_000);
    assert!(
        r.scenarios[1].notes.iter().any(|n| n.contains("write clat")),
        "{:?}",
        r.scenarios[1].notes
    );
}

#[test]
fn truncated_inputs_do_not_panic() {
    for name in
        ["cyclictest-2.4-h40.txt", "cyclictest-2.4-h100.json", "oslat-2.4.txt", "oslat-2.4.json"]
    {
        let text = fixture(name);
        for cut in (0..text.len()).step_by(97) {
            let _ = cyclictest::import(&text[..cut]);
            let _ = oslat::import(&text[..cut]);
        }
    }
}

#[test]
fn exporter_round_trips_through_the_importer() {
    let r = cyclictest::import(&fixture("cyclictest-2.4-h40.txt")).unwrap();
    let text = results::export::cyclictest::to_text(&r, Some(40));
    insta::assert_snapshot!(
        "export_h40",
        text.lines().filter(|l| !l.starts_with("0000")).collect::<Vec<_>>().join("\n")
    );
    let back = cyclictest::import(&text).unwrap();
    for (a, b) in r.threads.iter().zip(&back.threads) {
        assert_eq!(a.histogram.buckets, b.histogram.buckets);
        assert_eq!(a.histogram.overflow, b.histogram.overflow);
        assert_eq!(
            (a.stats.min_ns, a.stats.avg_ns, a.stats.max_ns),
            (b.stats.min_ns, b.stats.avg_ns, b.stats.max_ns)
        );
    }
    let plain = results::export::cyclictest::to_text(&r, None);
    assert!(plain.contains("\n# Max Latencies: 09966 99914\n"), "{plain}");
    assert!(
        plain.starts_with(
            "# /dev/cpu_dma_latency set to 0us\nT: 0 (    0) P: 0 I:0 C:   1991 Min:     10"
        ),
        "{plain}"
    );
}

#[test]
fn tables_render_imported_results() {
    let ct = cyclictest::import(&fixture("cyclictest-2.4-h40.txt")).unwrap();
    insta::assert_snapshot!("table_cyclictest", results::export::table::latency(&ct));
    let os = oslat::import(&fixture("oslat-2.4-2cpu.txt")).unwrap();
    insta::assert_snapshot!("table_oslat", results::export::table::latency(&os));
}

mod never_panic {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn importers_never_panic_on_arbitrary_text(s in "\\PC{0,400}") {
            let _ = cyclictest::import(&s);
            let _ = oslat::import(&s);
        }

        #[test]
        fn importers_never_panic_on_mangled_fixtures(cut in 0usize..4000, junk in "[0-9 :#TC\\t(){}\"]{0,30}") {
            for name in ["cyclictest-2.4-h40.txt", "oslat-2.4.txt", "cyclictest-2.4-h100.json", "oslat-2.4.json"] {
                let text = fixture(name);
                let cut = cut.min(text.len());
                let cut = (0..=cut).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
                let mangled = format!("{}{}{}", &text[..cut], junk, &text[cut..]);
                let _ = cyclictest::import(&mangled);
                let _ = oslat::import(&mangled);
            }
        }
    }
}
