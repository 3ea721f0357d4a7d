//! Fuzz reading a plan file (issue 11): never panic, never take long (deep nesting is refused
//! before the YAML parser), and whatever is accepted passes every rule, names only safe
//! characters and reads back the same from its own YAML.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(plan) = plan::Plan::from_yaml(text, "fuzz.yaml") else { return };
    assert!(plan.validate().is_ok(), "accepted a plan that breaks a rule");
    let safe = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c));
    assert!(safe(&plan.name), "{:?}", plan.name);
    assert!(plan.host.as_deref().is_none_or(safe), "{:?}", plan.host);
    assert!(plan.options.mcp_name.as_deref().is_none_or(safe), "{:?}", plan.options.mcp_name);
    assert!(!plan.isolated.is_empty() && !plan.reserved.is_empty());
    assert!(plan.reserved.intersection(&plan.isolated).is_empty());
    let yaml = plan.to_yaml().expect("an accepted plan serializes");
    let back = plan::Plan::from_yaml(&yaml, "back.yaml").expect("its own YAML reads back");
    assert_eq!(back, plan);
});
