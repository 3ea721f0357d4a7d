//! Which partition `lowlat check` judges: on a host already booted with isolation, its own
//! isolated CPUs — never a default plan that would verify and measure CPUs the user kept for
//! housekeeping; a plan the user gives, as given; a default evaluation plan only on a host
//! with no isolation. Read from the repository's real must-gathers.

#![allow(clippy::expect_used, reason = "test helpers")]

use std::path::PathBuf;

use check::{Partition, PlanSource};
use host::Root;

fn node(mg: &str, node: &str) -> host::Host {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/fixtures/must-gather")
        .join(mg);
    host::read(&Root::must_gather(&dir, Some(node)).expect("must-gather node"))
}

#[test]
fn a_tuned_worker_is_judged_on_its_own_isolated_cpus() {
    // worker1 booted with isolcpus=managed_irq,5-10 (testdata/NOTICE.md).
    let h = node("must-gather.bare-metal", "worker1");
    let Partition::HostOwn(own) = PlanSource::Auto.resolve(&h) else {
        panic!("a tuned host must be judged on its own isolation")
    };
    assert_eq!(own.isolated.to_list(), "5-10");
    assert!(own.reserved.contains(0) && !own.reserved.contains(5), "{}", own.reserved);
}

#[test]
fn an_untuned_node_gets_the_default_evaluation_plan() {
    // worker2: no isolation on its command line.
    let h = node("must-gather.bare-metal", "worker2");
    assert_eq!(PlanSource::Auto.resolve(&h), Partition::Default);
}

#[test]
fn a_given_plan_wins_over_the_hosts_own_isolation() {
    let h = node("must-gather.bare-metal", "worker1");
    let mut plan = verify::implied_plan(&h);
    plan.name = "mine".into();
    let given = PlanSource::Given { plan: Box::new(plan.clone()), file: "mine.yaml".into() };
    assert_eq!(
        given.resolve(&h),
        Partition::Given { plan: Box::new(plan), file: "mine.yaml".into() }
    );
}
