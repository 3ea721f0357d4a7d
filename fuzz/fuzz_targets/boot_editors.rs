//! Fuzz the boot loader editors (issue 21, item 11): any file given as `/etc/default/grub`
//! or as a BLS entry. Never panic; a refusal names its line; an edit re-parses, holds each of
//! the plan's arguments exactly once in the effective command line (no other value of its
//! key), keeps every other argument in order, and a second edit changes nothing. The same
//! invariants run as a proptest in `cargo test -p render` (tests/boot_editors.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use plan::{KernelArg, Plan, PlanOptions};
use render::boot;
use render::cmdline::tokens;

fn the_plan() -> Plan {
    let arg = |k: &str, v: Option<&str>| KernelArg {
        key: k.into(),
        value: v.map(str::to_string),
        reason: "fuzz".into(),
    };
    Plan {
        schema_version: 1,
        name: "fuzz".into(),
        host: None,
        reserved: cpuset::CpuSet::parse_list("0").unwrap(),
        isolated: cpuset::CpuSet::parse_list("1-3").unwrap(),
        offlined: cpuset::CpuSet::new(),
        options: PlanOptions::default(),
        kernel_args: vec![
            arg("nohz", Some("on")),
            arg("nohz_full", Some("1-3")),
            arg("isolcpus", Some("managed_irq,1-3")),
            arg("nosmt", None),
        ],
        runtime: vec![],
        rationale: vec![],
        smt_disabled: cpuset::CpuSet::new(),
    }
}

fn key(t: &str) -> &str {
    t.split_once('=').map_or(t, |(k, _)| k)
}

fn planned_key(k: &str) -> bool {
    ["nohz", "nohz_full", "isolcpus", "nosmt", "noht"].contains(&k)
}

fn check_line(p: &Plan, before: &str, after: &str) {
    let got = tokens(after);
    for a in &p.kernel_args {
        let t = a.token();
        assert_eq!(got.iter().filter(|g| **g == t).count(), 1, "{t} in {after:?}");
    }
    let others: Vec<&String> = got.iter().filter(|g| !planned_key(key(g))).collect();
    assert_eq!(others.len(), got.len() - p.kernel_args.len(), "{after:?}");
    let before: String = before.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let kept: Vec<String> = tokens(&before).into_iter().filter(|g| !planned_key(key(g))).collect();
    assert_eq!(others, kept.iter().collect::<Vec<_>>());
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let p = the_plan();
    let input = ("g".to_string(), text.clone());
    match boot::grub_with_warnings(&p, Some(&input)) {
        Err(e) => {
            let e = e.to_string();
            assert!(e.starts_with("g line "), "{e}");
            assert!(boot::grub_cmdline("g", &text).is_err(), "refused but readable");
        }
        Ok((f, _)) => {
            let before = boot::grub_cmdline("g", &text).unwrap().unwrap_or_default();
            let after = boot::grub_cmdline("g", &f.contents)
                .unwrap_or_else(|e| panic!("{:?} does not re-parse: {e}", f.contents))
                .unwrap_or_default();
            check_line(&p, &before, &after);
            let again = boot::grub(&p, Some(&("g".to_string(), f.contents.clone()))).unwrap();
            assert_eq!(again.contents, f.contents, "not idempotent");
        }
    }
    let input = ("e.conf".to_string(), text.clone());
    match boot::bls_with_warnings(&p, Some(&input)) {
        Err(e) => {
            let e = e.to_string();
            assert!(
                e.contains("does not look like a boot loader entry") || e.contains("e.conf line "),
                "{e}"
            );
        }
        Ok((f, _)) => {
            check_line(&p, &boot::bls_cmdline(&text), &boot::bls_cmdline(&f[0].contents));
            let again = boot::bls(&p, Some(&("e.conf".to_string(), f[0].contents.clone())));
            assert_eq!(again.unwrap()[0].contents, f[0].contents, "not idempotent");
            assert_eq!(f[1].contents, text, "the backup is the input");
        }
    }
});
