//! The report's test inputs are what the real producers write (see `produce`): the committed
//! files under `tests/fixtures/` must be exactly that, so no golden report certifies a shape
//! nothing makes. After a producer's shape changes, rewrite them with
//! `LOWLAT_BLESS_FIXTURES=1 cargo test -p report --test fixtures` and review the golden diffs.

#![allow(clippy::expect_used)]

mod common;
mod produce;

#[test]
fn fixtures_are_what_the_producers_write() {
    let bless = std::env::var_os("LOWLAT_BLESS_FIXTURES").is_some();
    let mut stale = Vec::new();
    for (name, text) in produce::all() {
        let path = common::fixture(name);
        if bless {
            std::fs::write(&path, &text).expect("fixture written");
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "{stale:?} differ from what the producers write now; rewrite them with \
         LOWLAT_BLESS_FIXTURES=1 cargo test -p report --test fixtures and review the golden diffs"
    );
}

#[test]
fn the_fixture_host_is_read_whole() {
    let h = produce::host();
    assert_eq!(h.topology.cpus.len(), 16);
    assert!(h.warnings.is_empty(), "{:?}", h.warnings);
    assert_eq!(h.kernel.realtime, Some(true));
    let p = produce::plan(&h);
    assert_eq!(
        (p.reserved.to_list(), p.isolated.to_list()),
        ("0,4,8,12".into(), "1-3,5-7,9-11,13-15".into())
    );
}
