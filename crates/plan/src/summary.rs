//! The human summary `lowlat plan` prints: the topology grid coloured by role, the sets, the
//! reasons, the kernel arguments. Pure text; colour only when asked for.

use cpuset::CpuSet;

use crate::layout::{plural, Layout};
use crate::model::{Plan, RuntimeItem};

const GREEN: &str = "\x1b[1;32m";
const CYAN: &str = "\x1b[36m";
const GREY: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

fn role(plan: &Plan, core: &[usize]) -> (char, &'static str) {
    let set: CpuSet = core.iter().copied().collect();
    if !set.intersection(&plan.reserved).is_empty() {
        ('H', GREEN)
    } else if !set.intersection(&plan.isolated).is_empty() {
        ('I', CYAN)
    } else if !set.intersection(&plan.offlined).is_empty() {
        ('O', GREY)
    } else {
        ('-', GREY)
    }
}

/// The topology grid: one block per NUMA node, one cell per core (`H 0,40`), eight per row.
pub fn grid(plan: &Plan, layout: &Layout, color: bool) -> String {
    let mut out = String::new();
    let width = layout
        .cores()
        .map(|c| c.cpus.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",").len())
        .max()
        .unwrap_or(1);
    for node in &layout.nodes {
        out.push_str(&format!("  NUMA node {} ({} cores)\n", node.id, node.cores.len()));
        for chunk in node.cores.chunks(8) {
            out.push_str("   ");
            for core in chunk {
                let (letter, col) = role(plan, &core.cpus);
                let text: Vec<String> = core.cpus.iter().map(|c| c.to_string()).collect();
                let cell = format!("{letter} {:<width$}", text.join(","));
                if color {
                    out.push_str(&format!(" {col}{cell}{RESET}"));
                } else {
                    out.push_str(&format!(" {cell}"));
                }
            }
            out.push('\n');
        }
    }
    out.push_str("  H housekeeping  I isolated  O offline  - SMT off (nosmt)\n");
    out
}

/// The full summary.
pub fn summary(plan: &Plan, layout: &Layout, color: bool) -> String {
    let o = &plan.options;
    let mut out = format!(
        "lowlat plan `{}`{} (style {}, power {}{})\n",
        util::term::sanitize(&plan.name, false),
        plan.host
            .as_deref()
            .map(|h| format!(" for {}", util::term::sanitize(h, false)))
            .unwrap_or_default(),
        o.style,
        o.power,
        if o.rt_kernel { ", real-time kernel" } else { "" }
    );
    out.push_str(&format!("host: {}\n\n", layout.describe()));
    out.push_str(&grid(plan, layout, color));
    out.push('\n');
    let line = |name: &str, set: &CpuSet| {
        format!(
            "  {name:<13}{} ({} CPU{})\n",
            if set.is_empty() { "-".to_string() } else { set.to_list() },
            set.len(),
            plural(set.len())
        )
    };
    out.push_str(&line("housekeeping", &plan.reserved));
    out.push_str(&line("isolated", &plan.isolated));
    if !plan.offlined.is_empty() {
        out.push_str(&line("offline", &plan.offlined));
    }
    if !plan.smt_disabled.is_empty() {
        out.push_str(&line("SMT off", &plan.smt_disabled));
    }
    out.push_str("\nwhy:\n");
    for r in &plan.rationale {
        out.push_str(&format!("  - {}\n", util::term::sanitize(&r.to_string(), false)));
    }
    out.push_str(
        "\nkernel arguments (boot; `lowlat render --plan FILE cmdline --explain` says why):\n  ",
    );
    let args = plan.kernel_args.iter().map(|a| a.token()).collect::<Vec<_>>().join(" ");
    out.push_str(&util::term::sanitize(&args, false));
    out.push('\n');
    let n_sysctl = plan.runtime.iter().filter(|r| matches!(r, RuntimeItem::Sysctl { .. })).count();
    out.push_str(&format!(
        "runtime knobs (`lowlat apply`): {} item{} ({} sysctl{}, IRQ/workqueue/kthread affinity, power)\n",
        plan.runtime.len(),
        plural(plan.runtime.len()),
        n_sysctl,
        plural(n_sysctl)
    ));
    out
}

/// The line after the summary: where the plan went and what to run next.
pub fn next_step(written_to: Option<&str>) -> String {
    match written_to {
        Some(out) => format!(
            "\nplan written to {out} (next: lowlat render --plan {out} cmdline --explain)\n"
        ),
        None => "\n(no plan file written: add -o plan.yaml)\n".to_string(),
    }
}
