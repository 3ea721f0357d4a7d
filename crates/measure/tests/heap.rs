//! `sys::keep_freed_memory`: memory the measuring process frees stays in its heap, so freeing
//! it never unmaps pages (an munmap flushes the TLB of every CPU running the process: an IPI
//! into each measuring thread). Without a test harness, on the main thread and its arena, as
//! in `lowlat measure`. The same check runs in a child process without the call, which must
//! see the memory handed back: the test cannot pass because the allocator happens to keep it.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

const BLOCK: usize = 16 << 20;
const CHILD: &str = "LOWLAT_HEAP_TEST_CHILD";

/// This process's `VmRSS`, in bytes.
fn rss_bytes(root: &host::Root) -> Option<u64> {
    let status = root.read_string("proc/self/status").ok()?;
    let kib = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    Some(kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok()? * 1024)
}

/// Resident bytes handed back to the kernel when a touched 16 MiB block is freed.
fn returned_by_free() -> u64 {
    let root = host::Root::live();
    let mut v = vec![0u8; BLOCK];
    for i in (0..BLOCK).step_by(4096) {
        v[i] = 1;
    }
    std::hint::black_box(&v);
    let held = rss_bytes(&root).expect("VmRSS");
    drop(v);
    let after = rss_bytes(&root).expect("VmRSS");
    held.saturating_sub(after)
}

fn main() {
    match std::env::var(CHILD).as_deref() {
        Ok("plain") => {
            println!("{}", returned_by_free());
            return;
        }
        Ok(other) => panic!("{CHILD}={other}"),
        Err(_) => {}
    }
    let me = std::env::current_exe().unwrap();
    let out = std::process::Command::new(me).env(CHILD, "plain").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let plain: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert!(plain >= (BLOCK as u64) * 3 / 4, "without the call, free returned only {plain} bytes");

    measure::sys::keep_freed_memory();
    let kept = returned_by_free();
    assert!(kept < (BLOCK as u64) / 8, "with the call, free still returned {kept} bytes");
    println!(
        "test heap: free returned {plain} bytes without keep_freed_memory, {kept} with it: ok"
    );
}
