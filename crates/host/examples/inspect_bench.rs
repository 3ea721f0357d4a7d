fn main() {
    let root = host::Root::open(std::path::Path::new(&std::env::args().nth(1).unwrap())).unwrap();
    let h = host::read(&root);
    use std::io::Write as _;
    let out = std::io::stdout().lock();
    let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
    serde_json::to_writer_pretty(&mut w, &h).unwrap();
    w.write_all(b"\n").unwrap();
    w.flush().unwrap();
}
