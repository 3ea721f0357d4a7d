use super::*;
use proptest::prelude::*;

fn l(s: &str) -> CpuSet {
    CpuSet::parse_list(s).unwrap()
}

#[test]
fn parses_kernel_lists() {
    assert_eq!(l("0-3,8,10-11").to_vec(), vec![0, 1, 2, 3, 8, 10, 11]);
    assert_eq!(l("5\n").to_vec(), vec![5]);
    assert!(l("").is_empty());
    assert!(l("\n").is_empty());
    assert_eq!(l("0-15:2/4").to_vec(), vec![0, 1, 4, 5, 8, 9, 12, 13]);
    assert_eq!(l("8191").to_vec(), vec![8191]);
}

#[test]
fn formats_canonically() {
    assert_eq!(l("3,2,1,0,8,11,10").to_list(), "0-3,8,10-11");
    assert_eq!(l("0,2,4").to_list(), "0,2,4");
    assert_eq!(l("1-1").to_list(), "1");
    assert_eq!(CpuSet::new().to_list(), "");
}

#[test]
fn errors_name_position_and_text() {
    let e = CpuSet::parse_list("0-3,x,5").unwrap_err();
    assert_eq!((e.pos, e.text.as_str()), (4, "x"));
    let e = CpuSet::parse_list("0-3,,5").unwrap_err();
    assert_eq!(e.pos, 4);
    let e = CpuSet::parse_list("4-2").unwrap_err();
    assert_eq!(e.what, "range start is above its end");
    let e = CpuSet::parse_list("0-9000").unwrap_err();
    assert_eq!((e.pos, e.text.as_str()), (2, "9000"));
    let e = CpuSet::parse_list("0-7:3/2").unwrap_err();
    assert_eq!(e.pos, 4);
    assert!(CpuSet::parse_list("1,").is_err());
    assert!(CpuSet::parse_list("-1").is_err());
    assert!(CpuSet::parse_list("1 2").is_err());
    let msg = CpuSet::parse_list("0-3,x").unwrap_err().to_string();
    assert!(msg.contains("position 4") && msg.contains("`x`"), "{msg}");
}

#[test]
fn parses_masks() {
    assert_eq!(CpuSet::parse_mask("ff\n").unwrap().to_list(), "0-7");
    assert_eq!(CpuSet::parse_mask("00000001,00000000").unwrap().to_list(), "32");
    assert_eq!(CpuSet::parse_mask("ffff,ffffffff,ffffffff").unwrap().to_list(), "0-79",);
    assert!(CpuSet::parse_mask("").is_err());
    let e = CpuSet::parse_mask("ff,zz").unwrap_err();
    assert_eq!((e.pos, e.text.as_str()), (3, "zz"));
    assert!(CpuSet::parse_mask("123456789").is_err());
}

#[test]
fn formats_masks_like_the_kernel() {
    // The 80-thread worker's default_smp_affinity is `ffff,ffffffff,ffffffff`.
    assert_eq!(l("0-79").to_mask(80), "ffff,ffffffff,ffffffff");
    assert_eq!(l("0-1").to_mask(2), "3");
    assert_eq!(l("0").to_mask(64), "00000000,00000001");
    assert_eq!(l("0-4,40-44").to_mask(80), "0000,00001f00,0000001f");
    assert_eq!(CpuSet::new().to_mask(4), "0");
}

#[test]
fn parse_any_detects_the_form() {
    assert_eq!(CpuSet::parse_any("0x1f").unwrap().to_list(), "0-4");
    assert_eq!(CpuSet::parse_any("ff,ffffffff").unwrap().to_list(), "0-39");
    assert_eq!(CpuSet::parse_any("10-11").unwrap().to_list(), "10-11");
    assert_eq!(CpuSet::parse_any("0xa").unwrap().to_list(), "1,3");
    let e = CpuSet::parse_any("abc").unwrap_err();
    assert!(e.to_string().contains("0x prefix"), "{e}");
    assert_eq!(CpuSet::parse_any("1,3").unwrap().to_list(), "1,3");
    assert_eq!(CpuSet::parse_any("3,ffffffff").unwrap().to_list(), "0-33");
}

#[test]
fn algebra() {
    let a = l("0-7");
    let b = l("4-11");
    assert_eq!(a.union(&b).to_list(), "0-11");
    assert_eq!(a.intersection(&b).to_list(), "4-7");
    assert_eq!(a.difference(&b).to_list(), "0-3");
    assert_eq!(a.symmetric_difference(&b).to_list(), "0-3,8-11");
    assert!(l("1-2").is_subset(&a));
    assert!(!b.is_subset(&a));
    assert!(l("0-1").is_disjoint(&l("2-3")));
    assert_eq!(a.first(), Some(0));
    assert_eq!(b.last(), Some(11));
    assert_eq!(l("8191").last(), Some(8191));
    assert_eq!(CpuSet::new().last(), None);
    assert_eq!(a.len(), 8);
}

#[test]
fn serde_uses_cpu_list_strings() {
    let s = l("0-3,8");
    assert_eq!(serde_json::to_string(&s).unwrap(), "\"0-3,8\"");
    let back: CpuSet = serde_json::from_str("\"8,0-3\"").unwrap();
    assert_eq!(back, s);
    assert!(serde_json::from_str::<CpuSet>("\"0-x\"").is_err());
}

fn arb_set() -> impl Strategy<Value = CpuSet> {
    prop::collection::vec(0usize..MAX_CPUS, 0..200).prop_map(CpuSet::from_cpus)
}

proptest! {
    #[test]
    fn list_roundtrip(s in arb_set()) {
        prop_assert_eq!(CpuSet::parse_list(&s.to_list()).unwrap(), s);
    }

    #[test]
    fn mask_roundtrip(s in arb_set(), width in 1usize..MAX_CPUS) {
        let m = s.to_mask(width);
        prop_assert_eq!(CpuSet::parse_mask(&m).unwrap(), s);
    }

    #[test]
    fn canonical_is_fixed_point(s in arb_set()) {
        let once = s.to_list();
        prop_assert_eq!(CpuSet::parse_list(&once).unwrap().to_list(), once);
    }

    #[test]
    fn parsers_never_panic(input in "[0-9a-fx,:/ -]{0,40}") {
        let _ = CpuSet::parse_list(&input);
        let _ = CpuSet::parse_mask(&input);
        let _ = CpuSet::parse_any(&input);
    }

    #[test]
    fn algebra_laws(a in arb_set(), b in arb_set()) {
        prop_assert_eq!(a.union(&b).len() + a.intersection(&b).len(), a.len() + b.len());
        prop_assert!(a.difference(&b).is_disjoint(&b));
        prop_assert!(a.intersection(&b).is_subset(&a));
    }
}

#[test]
fn to_list_matches_the_cpu_by_cpu_form() {
    // The word-at-a-time runs against a plain walk over the CPUs, at word edges and the limit.
    let naive = |s: &CpuSet| {
        let v = s.to_vec();
        let mut out: Vec<String> = Vec::new();
        let mut i = 0;
        while i < v.len() {
            let mut j = i;
            while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
                j += 1;
            }
            out.push(if i == j { v[i].to_string() } else { format!("{}-{}", v[i], v[j]) });
            i = j + 1;
        }
        out.join(",")
    };
    for list in [
        "",
        "0",
        "63",
        "64",
        "63-64",
        "0-63",
        "0-127",
        "1,3,5-70,127-128,200",
        "0-1,64-511",
        "8191",
        "8000-8191",
        "0-8191",
        "0,8191",
    ] {
        let s = CpuSet::parse_list(list).unwrap();
        assert_eq!(s.to_list(), naive(&s), "{list}");
        assert_eq!(CpuSet::parse_list(&s.to_list()).unwrap(), s, "{list}");
    }
}

#[test]
fn equal_sets_are_equal_however_built() {
    // The bitmap keeps no zero word at its end: a set emptied of its high CPUs, or made by
    // algebra, equals (and hashes as) the same set parsed directly.
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    let hash = |s: &CpuSet| {
        let mut h = DefaultHasher::new();
        s.hash(&mut h);
        h.finish()
    };
    let small = CpuSet::parse_list("0-3").unwrap();
    let mut shrunk = CpuSet::parse_list("0-3,500,8191").unwrap();
    shrunk.remove(8191);
    shrunk.remove(500);
    let big = CpuSet::parse_list("0-3,4000-4095").unwrap();
    let parts = [
        shrunk,
        big.difference(&CpuSet::parse_list("4000-4095").unwrap()),
        big.intersection(&CpuSet::first_n(64)),
        big.symmetric_difference(&CpuSet::parse_list("4000-4095").unwrap()),
    ];
    for s in &parts {
        assert_eq!(s, &small);
        assert_eq!(hash(s), hash(&small));
        assert_eq!(s.last(), Some(3));
    }
    let mut empty = CpuSet::parse_list("8191").unwrap();
    empty.remove(8191);
    assert_eq!(empty, CpuSet::new());
    assert!(empty.is_empty() && empty.last().is_none() && empty.iter().next().is_none());
    assert_eq!(empty.to_list(), "");
    assert!(empty.is_subset(&small) && !big.is_subset(&small) && small.is_subset(&big));
    assert!(!empty.contains(8191) && !small.contains(9000) && !small.contains(4));
    assert_eq!(CpuSet::parse_list("8191").unwrap().to_mask(0).len(), 256 * 9 - 1);
}
