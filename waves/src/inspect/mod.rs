//! Looking at waveform files from the command line (`nic waves`): VCD or FST from
//! either simulator, streamed so that a window near the end of a large file needs
//! memory for the window only.
//!
//! - [`WaveFile`]: open a file (format recognised by content), its [`Header`], and
//!   its value changes as an iterator of time [`Step`]s.
//! - [`select`]: signals by dotted suffix or glob.
//! - [`write_listing`]: scopes and signals with widths (`nic waves list`).
//! - [`write_table`]: a window as a text table (`nic waves show`).
//! - [`render_svg`]: a timing diagram (`nic waves render`); [`svg_to_png`] rasterises it.
//! - [`nic_groups`], [`write_gtkw`], [`write_surfer`]: viewer save files grouping the
//!   NIC's signals by block (`nic waves gtkw`).
//! - [`diff`]: two runs compared by design name ([`design_names`]), `nic waves diff`.
//!
//! Times are femtoseconds throughout ([`parse_time`] reads `1500`, `1500ps`, `2.5ns`),
//! so files with different timescales compare directly.

mod diff;
mod edges;
mod format;
mod fst_source;
mod groups;
mod gtkw;
mod header;
mod listing;
mod names;
mod png;
mod render;
mod select;
mod source;
mod table;
mod time;
mod vcd_source;
mod window;

pub use diff::{diff, DiffOptions, DiffReport, Difference};
pub use format::short as short_value;
pub use groups::{nic_groups, Group};
pub use gtkw::{write_gtkw, write_surfer};
pub use header::{Format, Header, Var};
pub use listing::write_listing;
pub use names::{design_names, design_root, MARKERS, MARKER_SCOPE};
pub use png::svg_to_png;
pub use render::{render_svg, RenderOptions, MIN_SEGMENT_PX};
pub use select::{matches, select};
pub use source::{Changes, Step, WaveFile};
pub use table::{labels, short_names, write_table};
pub use time::{format_time, parse_time, TimeUnit};
pub use window::{check_window, scan_window, Row};
