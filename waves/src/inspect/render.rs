//! `nic waves render`: a timing diagram of a window as SVG, drawn while the file is
//! read.
//!
//! Bits are lines between a low and a high level (unknown: a red band, high impedance:
//! a line in the middle); buses, strings and reals are hexagon-ended segments with their
//! value written inside when it fits. Changes closer together than
//! [`MIN_SEGMENT_PX`] merge into a grey block, so memory and output size depend on
//! the picture's width, not on how busy the window is. Text is monospace, so whether a
//! value fits is computed, not guessed.

use super::format::short;
use super::header::Var;
use super::source::WaveFile;
use super::table::labels;
use super::time::format_time;
use super::window::scan_window;
use crate::value::Value;
use crate::WaveError;
use std::fmt::Write as _;

/// Narrower segments are merged into a grey "busy" block.
pub const MIN_SEGMENT_PX: f64 = 2.0;
const FONT_PX: f64 = 12.0;
/// Advance of one character of the monospace font at [`FONT_PX`].
const CHAR_PX: f64 = FONT_PX * 0.6;
const ROW_PX: f64 = 28.0;
const WAVE_PX: f64 = 18.0;
const AXIS_PX: f64 = 44.0;
const MARGIN_PX: f64 = 10.0;

/// How to draw.
#[derive(Clone, Debug)]
pub struct RenderOptions {
    /// Width of the whole picture in pixels (at least 300).
    pub width_px: u32,
    /// A line above the diagram; `None`: the file name and the window.
    pub title: Option<String>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            width_px: 1200,
            title: None,
        }
    }
}

#[derive(Clone, Debug)]
struct Segment {
    start: u64,
    value: Option<Value>,
    /// Changes too close to draw merged into this segment: a grey block from `start` to
    /// `busy_until` (the last of them), then `value`, the level they left.
    busy: bool,
    busy_until: u64,
}

/// Draw `vars` over `[from, to]` (femtoseconds, `from < to`) as an SVG document.
pub fn render_svg(
    file: WaveFile,
    vars: &[Var],
    from: u64,
    to: u64,
    options: &RenderOptions,
) -> Result<String, WaveError> {
    if from >= to {
        return Err(WaveError::BadArgument {
            message: format!(
                "a diagram needs a window of some length: --from {} --to {}",
                format_time(from),
                format_time(to)
            ),
        });
    }
    let title = options.title.clone().unwrap_or_else(|| {
        format!(
            "{}  [{} .. {}]",
            file.header().path.display(),
            format_time(from),
            format_time(to)
        )
    });
    let names = labels(file.header(), vars);
    let label_px = (names.iter().map(|n| n.chars().count()).max().unwrap_or(4) as f64 * CHAR_PX
        + 16.0)
        .min(360.0);
    let width = options.width_px.max(300) as f64;
    let x0 = MARGIN_PX + label_px;
    let x1 = width - 3.0 * MARGIN_PX;
    let scale = (x1 - x0) / (to - from) as f64;
    let x_of = |t: u64| x0 + (t.saturating_sub(from)) as f64 * scale;

    let mut segments: Vec<Vec<Segment>> = vec![Vec::new(); vars.len()];
    scan_window(file, vars, from, to, |row| {
        for (i, value) in row.values.iter().enumerate() {
            let segs = &mut segments[i];
            if segs.is_empty() {
                segs.push(Segment {
                    start: row.time,
                    value: value.clone(),
                    busy: false,
                    busy_until: row.time,
                });
                continue;
            }
            if !row.changed[i] {
                continue;
            }
            let last = segs.last_mut().expect("not empty");
            let since = if last.busy {
                last.busy_until
            } else {
                last.start
            };
            if x_of(row.time) - x_of(since) < MIN_SEGMENT_PX {
                last.busy = true;
                last.busy_until = row.time;
                last.value = value.clone();
            } else {
                segs.push(Segment {
                    start: row.time,
                    value: value.clone(),
                    busy: false,
                    busy_until: row.time,
                });
            }
        }
        Ok(())
    })?;

    let height = AXIS_PX + ROW_PX * vars.len() as f64 + MARGIN_PX;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="{FONT_PX}">"#
    );
    let _ = writeln!(
        svg,
        r##"<rect width="100%" height="100%" fill="#ffffff"/>
<text x="{MARGIN_PX}" y="16" font-weight="bold">{}</text>"##,
        escape(&title)
    );
    axis(&mut svg, from, to, x0, x1, height, &x_of);
    for (i, (var, segs)) in vars.iter().zip(&segments).enumerate() {
        let top = AXIS_PX + ROW_PX * i as f64 + (ROW_PX - WAVE_PX) / 2.0;
        let _ = writeln!(
            svg,
            r##"<text x="{MARGIN_PX}" y="{:.1}" fill="#202020">{}</text>"##,
            top + WAVE_PX / 2.0 + FONT_PX * 0.35,
            escape(&names[i])
        );
        for (k, seg) in segs.iter().enumerate() {
            let end = segs.get(k + 1).map(|s| s.start).unwrap_or(to);
            let (mut a, b) = (x_of(seg.start), x_of(end));
            if seg.busy {
                // The block covers the merged changes (at least MIN_SEGMENT_PX wide);
                // the level they left follows it.
                let grey_end = x_of(seg.busy_until).max(a + MIN_SEGMENT_PX).min(b);
                let _ = writeln!(
                    svg,
                    r##"<rect x="{a:.1}" y="{top:.1}" width="{:.1}" height="{WAVE_PX}" fill="#b0b0b0"><title>{} changes too close to draw; last value {}</title></rect>"##,
                    (grey_end - a).max(1.0),
                    escape(&names[i]),
                    escape(&seg.value.as_ref().map(short).unwrap_or_default())
                );
                a = grey_end;
            }
            if b > a {
                if var.width == 1 {
                    bit(&mut svg, seg.value.as_ref(), a, b, top);
                } else {
                    bus(&mut svg, seg.value.as_ref(), a, b, top);
                }
            }
        }
        // Vertical edges between bit segments.
        if var.width == 1 {
            for w in segs.windows(2) {
                if w[0].busy || w[1].busy {
                    continue;
                }
                let x = x_of(w[1].start);
                let _ = writeln!(
                    svg,
                    r##"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{:.1}" stroke="#1a7f37" stroke-width="1.5"/>"##,
                    top + WAVE_PX
                );
            }
        }
    }
    svg.push_str("</svg>\n");
    Ok(svg)
}

fn bit(svg: &mut String, v: Option<&Value>, a: f64, b: f64, top: f64) {
    let level = v.and_then(|v| v.as_bool());
    match (v, level) {
        (Some(_), Some(high)) => {
            let y = if high { top } else { top + WAVE_PX };
            let _ = writeln!(
                svg,
                r##"<line x1="{a:.1}" y1="{y:.1}" x2="{b:.1}" y2="{y:.1}" stroke="#1a7f37" stroke-width="1.5"/>"##
            );
        }
        (Some(v), None) if v.bits() == "z" => {
            let y = top + WAVE_PX / 2.0;
            let _ = writeln!(
                svg,
                r##"<line x1="{a:.1}" y1="{y:.1}" x2="{b:.1}" y2="{y:.1}" stroke="#1f4fbf" stroke-width="1.5"/>"##
            );
        }
        (Some(_), None) => unknown(svg, a, b, top),
        (None, _) => {}
    }
}

fn bus(svg: &mut String, v: Option<&Value>, a: f64, b: f64, top: f64) {
    let Some(v) = v else { return };
    let known = v.is_known();
    let slant = 3.0f64.min((b - a) / 2.0);
    let (mid, bot) = (top + WAVE_PX / 2.0, top + WAVE_PX);
    let (fill, stroke) = if known {
        ("#eaf3ea", "#1a7f37")
    } else {
        ("#f6d5d5", "#c03030")
    };
    let _ = writeln!(
        svg,
        r#"<polygon points="{a:.1},{mid:.1} {:.1},{top:.1} {:.1},{top:.1} {b:.1},{mid:.1} {:.1},{bot:.1} {:.1},{bot:.1}" fill="{fill}" stroke="{stroke}" stroke-width="1.2"/>"#,
        a + slant,
        b - slant,
        b - slant,
        a + slant
    );
    let text = short(v);
    let room = b - a - 2.0 * slant - 4.0;
    if text.chars().count() as f64 * CHAR_PX <= room {
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#101010">{}</text>"##,
            (a + b) / 2.0,
            mid + FONT_PX * 0.35,
            escape(&text)
        );
    } else {
        let _ = writeln!(svg, "<!-- {} -->", escape(&text));
    }
}

fn unknown(svg: &mut String, a: f64, b: f64, top: f64) {
    let _ = writeln!(
        svg,
        r##"<rect x="{a:.1}" y="{top:.1}" width="{:.1}" height="{WAVE_PX}" fill="#f6d5d5" stroke="#c03030" stroke-width="1"/>"##,
        (b - a).max(0.5)
    );
}

/// Ticks at a round step (1, 2 or 5 times a power of ten femtoseconds), about ten.
fn axis(
    svg: &mut String,
    from: u64,
    to: u64,
    x0: f64,
    x1: f64,
    height: f64,
    x_of: &impl Fn(u64) -> f64,
) {
    let span = to - from;
    let mut step = 1u64;
    'find: loop {
        for m in [1, 2, 5] {
            if let Some(s) = step.checked_mul(m) {
                if span / s <= 10 {
                    step = s;
                    break 'find;
                }
            }
        }
        match step.checked_mul(10) {
            Some(s) => step = s,
            None => break,
        }
    }
    let y = AXIS_PX - 10.0;
    let _ = writeln!(
        svg,
        r##"<line x1="{x0:.1}" y1="{y:.1}" x2="{x1:.1}" y2="{y:.1}" stroke="#606060"/>"##
    );
    // Every label in the unit of the step: 2000 ns, 2100 ns, ...
    let unit = [
        1_000_000_000_000_000u64,
        1_000_000_000_000,
        1_000_000_000,
        1_000_000,
        1_000,
        1,
    ]
    .into_iter()
    .find(|u| step.is_multiple_of(*u))
    .unwrap_or(1);
    let unit_name = match unit {
        1_000_000_000_000_000 => "s",
        1_000_000_000_000 => "ms",
        1_000_000_000 => "us",
        1_000_000 => "ns",
        1_000 => "ps",
        _ => "fs",
    };
    let mut t = from.div_ceil(step) * step;
    while t <= to {
        let x = x_of(t);
        let _ = writeln!(
            svg,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#d8d8d8"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#606060" font-size="10">{} {unit_name}</text>"##,
            y - 3.0,
            height - MARGIN_PX,
            y - 6.0,
            t / unit
        );
        match t.checked_add(step) {
            Some(n) => t = n,
            None => break,
        }
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
