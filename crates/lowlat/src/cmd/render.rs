//! `lowlat render --plan FILE TARGET [-o DIR]`: read a plan file, render one target, print it
//! or write it (the BLS target patches its input in place, keeping a backup).

use anyhow::Context as _;
use cli::args::render::Args;
use render::{files, RenderOptions, Target};

use crate::exit::ExitCode;

/// Run `lowlat render`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // The pod hands the duration to `lowlat measure timer -D` as written: check it parses there.
    util::duration::parse_span(&args.duration)
        .with_context(|| format!("--duration {}", args.duration))?;
    let opts = RenderOptions {
        explain: args.explain,
        input: args.input.as_deref().map(files::read_input).transpose()?,
        role: args.role,
        image: args.image,
        namespace: args.namespace,
        duration: args.duration,
        max_latency_us: args.max_latency_us,
        test_cpus: args.test_cpus,
        runtime_class: args.runtime_class,
        rt_packages: args.rt_packages,
        beyond_nto: args.beyond_nto,
    };
    opts.check()?;
    let rendered = match (&args.plan, args.target) {
        (_, Target::ClusterRbac) => render::rbac::render(&opts),
        (Some(p), target) => {
            let (files, warnings) =
                render::render_with_warnings(&plan::Plan::load(p)?, target, &opts)?;
            // What an edit of the user's file changed beyond the plan's values, said before
            // anything is written (the edited file carries the same lines as comments).
            for w in warnings {
                eprintln!("lowlat: warning: {w}");
            }
            files
        }
        (None, target) => {
            return Err(crate::exit::usage(format!(
                "the {target} target needs --plan FILE (`lowlat plan -o plan.yaml`)"
            )))
        }
    };
    if let Some(out) = &args.json.json {
        out.write_json(&files::Document::new(args.target, &rendered))?;
        if args.json.to_stdout() && args.output.is_none() && args.input.is_none() {
            return Ok(ExitCode::Ok);
        }
    }
    match (&args.output, &args.input) {
        // `-o -`: standard output, as everywhere else (not a directory named `-`)
        (Some(dir), _) if dir.as_os_str() == "-" => print!("{}", render::listing(&rendered)),
        (Some(dir), _) => {
            for path in files::write_dir(dir, &rendered)? {
                if !util::term::quiet() {
                    println!("wrote {}", path.display());
                }
            }
        }
        (None, Some(entry)) if args.target == Target::Bls => {
            let (backup, wrote) = files::patch_in_place(entry, &rendered)?;
            let kept = if wrote { "" } else { ", the first one, kept" };
            println!("patched {} (backup {}{kept})", entry.display(), backup.display());
        }
        _ => print!("{}", render::listing(&rendered)),
    }
    Ok(ExitCode::Ok)
}
