//! Snapshot of the summary `lowlat plan` prints for the fixture worker1 (plain and coloured).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use plan::layout::Layout;

#[test]
fn plan_summary_for_worker1() {
    let (_, plan) = common::cases().remove(0);
    let host = common::host("must-gather.bare-metal", "worker1");
    let layout = Layout::from_host(&host);
    let plain = plan::summary::summary(&plan, &layout, false);
    assert!(!plain.contains('\x1b'));
    insta::assert_snapshot!("worker1_rt_summary", plain);
    let colored = plan::summary::summary(&plan, &layout, true);
    assert!(colored.contains("\x1b[1;32mH 0,40 \x1b[0m"), "{colored}");
    assert!(colored.contains("\x1b[2mO 39,79\x1b[0m"), "{colored}");
}
