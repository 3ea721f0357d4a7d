//! Reading a plan file: size capped, nesting checked, parsed, `kernel_args` derived again and
//! every rule of [`crate::validate`] applied (issue 11: a plan file is untrusted input).

use crate::model::{Plan, MAX_PLAN_BYTES, SCHEMA_VERSION};

impl Plan {
    /// Read and parse a plan file (`-`: standard input). The file is capped at
    /// [`MAX_PLAN_BYTES`] before parsing (a plan is a few KiB; a huge or deeply nested file is
    /// refused at once, not parsed).
    pub fn load(path: &std::path::Path) -> Result<Plan, crate::PlanError> {
        use std::io::Read as _;
        let what = path.display().to_string();
        let unreadable = |e: std::io::Error| {
            crate::PlanError::File(format!(
                "cannot read plan {what}: {e} (make one with `lowlat plan -o plan.yaml`)"
            ))
        };
        // `-` is standard input (`lowlat plan … -o - | lowlat apply --plan -`).
        let mut bytes = Vec::new();
        if path.as_os_str() == "-" {
            std::io::stdin()
                .lock()
                .take(MAX_PLAN_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(unreadable)?;
        } else {
            let f = std::fs::File::open(path).map_err(unreadable)?;
            f.take(MAX_PLAN_BYTES + 1).read_to_end(&mut bytes).map_err(unreadable)?;
        }
        if bytes.len() as u64 > MAX_PLAN_BYTES {
            return Err(crate::PlanError::File(format!(
                "{what}: larger than {} KiB; a plan file is a few KiB — is this the right file?",
                MAX_PLAN_BYTES / 1024
            )));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| crate::PlanError::File(format!("{what}: not UTF-8 text")))?;
        Self::from_yaml(&text, &what)
    }

    /// Parse and check a plan file; `what` names it in errors. A newer or zero
    /// `schema_version`, an unknown field (named with the nearest valid one), a deeply nested
    /// file and a plan that breaks a rule of [`Plan::validate`] are refused; `kernel_args` is
    /// derived from the sets and options, whatever the file says.
    pub fn from_yaml(text: &str, what: &str) -> Result<Plan, crate::PlanError> {
        let file = |e: String| crate::PlanError::File(format!("{what}: {e}"));
        crate::validate::check_nesting(text).map_err(|e| file(format!("not a plan file: {e}")))?;
        let value: serde_norway::Value =
            serde_norway::from_str(text).map_err(|e| file(format!("not YAML: {e}")))?;
        let version = value.get("schema_version").and_then(serde_norway::Value::as_u64);
        match version {
            None => {
                return Err(file(
                    "no `schema_version` field; this is not a lowlat plan file (make one with `lowlat plan -o plan.yaml`)".into()
                ))
            }
            Some(v) if v > u64::from(SCHEMA_VERSION) => {
                return Err(file(format!(
                    "plan schema_version {v} is newer than this lowlat understands ({SCHEMA_VERSION}); upgrade lowlat or re-create the plan with this version's `lowlat plan`"
                )))
            }
            Some(_) => {}
        }
        let mut plan: Plan = serde_norway::from_value(value).map_err(|e| {
            file(format!("invalid plan: {}", crate::validate::suggest(&e.to_string())))
        })?;
        plan.kernel_args =
            crate::rules::derived_kernel_args(&plan.reserved, &plan.isolated, &plan.options);
        plan.validate().map_err(|p| file(format!("invalid plan: {p}")))?;
        Ok(plan)
    }
}
