//! Where waveforms go and whether they are written at all.

use crate::WaveError;
use std::path::{Path, PathBuf};

/// Environment variable that switches waveform dumping on: `1`, `true` or `on`
/// (any case). Unset, empty, `0`, `false` or `off` leave it off.
pub const WAVES_ENV: &str = "NIC_WAVES";

/// Environment variable that overrides the workspace root used by [`wave_path`].
pub const WORKSPACE_ROOT_ENV: &str = "NIC_WORKSPACE_ROOT";

/// Whether tests should write waveforms, from [`WAVES_ENV`] (`NIC_WAVES`). Default off.
///
/// # Panics
/// When `NIC_WAVES` holds anything other than the on/off spellings above, so a typo
/// such as `NIC_WAVES=yes` does not silently produce no waveforms.
pub fn waves_enabled() -> bool {
    match std::env::var(WAVES_ENV) {
        Ok(v) => parse_waves_setting(&v).unwrap_or_else(|e| panic!("{e}")),
        Err(_) => false,
    }
}

/// Parse a value of `NIC_WAVES`: `1`/`true`/`on` → `true`, empty/`0`/`false`/`off` → `false`
/// (case-insensitive, surrounding spaces ignored); anything else is an error.
pub fn parse_waves_setting(value: &str) -> Result<bool, WaveError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "on" => Ok(true),
        "" | "0" | "false" | "off" => Ok(false),
        _ => Err(WaveError::BadSetting {
            value: value.to_string(),
        }),
    }
}

/// The workspace root: `NIC_WORKSPACE_ROOT` if set and non-empty, else the parent of
/// this crate's directory as it was when the crate was compiled (`/work/main` for
/// `/work/main/waves`).
pub fn workspace_root() -> PathBuf {
    match std::env::var_os(WORKSPACE_ROOT_ENV) {
        Some(root) if !root.is_empty() => PathBuf::from(root),
        _ => Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("nic-waves lives one level below the workspace root")
            .to_path_buf(),
    }
}

/// `<workspace root>/waves/<block>/<test>.vcd`: the one place a test's waveform goes.
///
/// The directory is not created here; [`crate::RustHdlVcd::create`] creates it.
///
/// # Panics
/// When `block` or `test` is empty, `.`/`..`, or holds a path separator, since the
/// file would land outside `waves/<block>/`.
pub fn wave_path(block: &str, test: &str) -> PathBuf {
    check_component("block", block);
    check_component("test", test);
    workspace_root()
        .join("waves")
        .join(block)
        .join(format!("{test}.vcd"))
}

fn check_component(what: &str, name: &str) {
    assert!(
        !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\']),
        "wave_path: {what} name must be a plain file name (not empty, `.`, `..`, no `/` or `\\`), got {name:?}"
    );
}

/// Create the parent directory of `path` if it is missing.
pub(crate) fn create_parent(path: &Path) -> Result<(), WaveError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).map_err(|source| WaveError::Io {
                path: dir.to_path_buf(),
                source,
            })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setting_spellings() {
        for on in ["1", "true", "ON", " on "] {
            assert!(parse_waves_setting(on).unwrap(), "{on}");
        }
        for off in ["", "0", "false", "Off"] {
            assert!(!parse_waves_setting(off).unwrap(), "{off}");
        }
        let err = parse_waves_setting("yes").unwrap_err().to_string();
        assert!(err.contains("NIC_WAVES=\"yes\" is not understood"), "{err}");
    }

    #[test]
    fn wave_path_layout() {
        let p = wave_path("cell_segmenter", "random_backpressure");
        assert!(
            p.ends_with("waves/cell_segmenter/random_backpressure.vcd"),
            "{p:?}"
        );
        if std::env::var_os(WORKSPACE_ROOT_ENV).is_none() {
            assert!(workspace_root().join("Cargo.toml").is_file());
        }
    }

    #[test]
    #[should_panic(expected = "block name must be a plain file name")]
    fn wave_path_rejects_separator() {
        wave_path("../etc", "x");
    }

    #[test]
    #[should_panic(expected = "test name must be a plain file name")]
    fn wave_path_rejects_empty_test() {
        wave_path("counter", "");
    }
}
