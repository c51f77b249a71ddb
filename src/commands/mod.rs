//! One module per subcommand; each turns arguments into calls on the library crates.
pub mod agree;
pub mod bench;
pub mod cell;
pub mod check;
pub mod lint;
pub mod measurements;
pub mod plot;
pub mod pools;
pub mod regcache;
pub mod rejoin_bench;
pub mod scenario;
pub mod sim;
pub mod soak;
pub mod synth;
pub mod verilog;
pub mod waves;

/// Writes `text` to `path`, creating its folder; the error names the path.
pub fn write_file(path: &std::path::Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}
