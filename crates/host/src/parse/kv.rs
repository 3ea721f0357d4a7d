//! `Key: value` files (`/proc/meminfo`, `/proc/PID/status`, node `meminfo`).

/// `(key, value)` pairs in order; lines without a colon are skipped. Node meminfo lines
/// (`Node 0 MemTotal:  123 kB`) drop their `Node N ` prefix.
pub fn pairs(text: &str) -> Vec<(&str, &str)> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let k = k.trim();
            let k = match k.strip_prefix("Node ") {
                Some(r) => r.split_once(' ').map_or(r, |(_, k)| k.trim()),
                None => k,
            };
            Some((k, v.trim()))
        })
        .collect()
}

/// The value of `key`, as written.
pub fn get<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    pairs(text).into_iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

/// A `kB` quantity (`MemTotal:  16303220 kB`) or a plain count (`HugePages_Total: 4`).
pub fn kb(text: &str, key: &str) -> Option<u64> {
    get(text, key)?.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_and_node_meminfo() {
        let m = "MemTotal:       16303220 kB\nMemAvailable:   1234 kB\nHugePages_Total:       4\ngarbage\n";
        assert_eq!(kb(m, "MemTotal"), Some(16303220));
        assert_eq!(kb(m, "HugePages_Total"), Some(4));
        assert_eq!(kb(m, "Missing"), None);
        let n = "Node 1 MemTotal:       98765 kB\nNode 1 MemFree:  5 kB\n";
        assert_eq!(kb(n, "MemTotal"), Some(98765));
        assert_eq!(kb("MemTotal: x kB", "MemTotal"), None);
        assert_eq!(kb("MemTotal:", "MemTotal"), None);
    }
}
