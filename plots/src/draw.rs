//! The two chart kinds every picture is made of, drawn with plotters' SVG backend:
//! [`LineChart`] (a figure against a numeric axis, each point a median with its min..max
//! whisker) and [`BarChart`] (horizontal bars per named row, one bar per series, with a
//! whisker where the values spread and an optional reference line such as a device's
//! capacity or a clock target).
//!
//! Log axes are drawn on a linear axis of the value's logarithm, so the ticks fall on
//! powers of two ([`Scale::Log2`], host counts and sizes) or ten ([`Scale::Log10`], rates
//! and latencies) and read as plain numbers (`2 4 8 16`, `10 k 100 k 1 M`).

use crate::ChartError;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::series::LineSeries as Polyline;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// Min, median and max of one figure over seeds (one value: all three equal).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Spread {
    /// One value, no spread.
    pub fn one(v: f64) -> Self {
        Spread {
            min: v,
            median: v,
            max: v,
        }
    }

    /// Min, median (the lower middle of an even count) and max; `None` for no values.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Self> {
        let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(Spread {
            min: v[0],
            median: v[(v.len() - 1) / 2],
            max: v[v.len() - 1],
        })
    }

    fn spreads(&self) -> bool {
        self.max > self.min
    }
}

/// How an axis maps values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Ticks on powers of two: host counts, message sizes.
    Log2,
    /// Ticks on powers of ten: rates, latencies spanning decades.
    Log10,
}

impl Scale {
    fn to_axis(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log2 => v.max(f64::MIN_POSITIVE).log2(),
            Scale::Log10 => v.max(f64::MIN_POSITIVE).log10(),
        }
    }

    fn from_axis(self, a: f64) -> f64 {
        match self {
            Scale::Linear => a,
            Scale::Log2 => a.exp2(),
            Scale::Log10 => 10f64.powf(a),
        }
    }

    /// Whether `v` has a place on the axis (finite; positive on a log axis).
    fn shows(self, v: f64) -> bool {
        v.is_finite() && (self == Scale::Linear || v > 0.0)
    }

    /// The axis range covering `lo..=hi` (values), with room around it.
    fn range(self, lo: f64, hi: f64) -> (f64, f64) {
        match self {
            Scale::Linear => {
                let lo = lo.min(0.0);
                let hi = if hi > lo { hi * 1.12 } else { lo + 1.0 };
                (lo, hi)
            }
            Scale::Log2 | Scale::Log10 => {
                let (a, b) = (self.to_axis(lo).floor(), self.to_axis(hi).ceil());
                if b > a {
                    (a - 0.25, b + 0.25)
                } else {
                    (a - 1.0, a + 1.0)
                }
            }
        }
    }

    /// Tick count asked of plotters: one per power on log axes.
    fn ticks(self, range: (f64, f64)) -> usize {
        match self {
            Scale::Linear => 8,
            _ => ((range.1 - range.0).floor() as usize + 1).clamp(2, 20),
        }
    }

    /// The label of axis position `a`.
    fn label(self, a: f64) -> String {
        match self {
            Scale::Linear => number(a),
            Scale::Log2 => {
                let v = self.from_axis(a);
                if (a - a.round()).abs() < 1e-6 {
                    binary(v)
                } else {
                    String::new()
                }
            }
            Scale::Log10 => number(self.from_axis(a)),
        }
    }
}

/// A number with an SI suffix and three significant digits: `950`, `12.5 k`, `13.2 M`.
pub fn number(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, " G")
    } else if a >= 1e6 {
        (v / 1e6, " M")
    } else if a >= 1e3 {
        (v / 1e3, " k")
    } else {
        (v, "")
    };
    let digits = if x.abs() >= 100.0 || x == x.round() {
        0
    } else if x.abs() >= 10.0 {
        1
    } else {
        2
    };
    let mut text = format!("{x:.digits$}");
    if text.contains('.') {
        text.truncate(text.trim_end_matches('0').trim_end_matches('.').len());
    }
    format!("{text}{suffix}")
}

/// A power of two as people write sizes: `64`, `4 Ki`, `64 Ki`.
fn binary(v: f64) -> String {
    let v = v.round();
    if v >= 1024.0 * 1024.0 {
        format!("{} Mi", v / (1024.0 * 1024.0))
    } else if v >= 1024.0 {
        format!("{} Ki", v / 1024.0)
    } else {
        format!("{v}")
    }
}

/// One line of a [`LineChart`]: points `(x, spread of y)`.
#[derive(Clone, Debug)]
pub struct LineSeries {
    pub name: String,
    pub points: Vec<(f64, Spread)>,
}

/// A figure against a numeric axis, one line per series, min..max whiskers.
#[derive(Clone, Debug)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    pub series: Vec<LineSeries>,
}

/// One series of a [`BarChart`]: a value per row (`None`: no bar, e.g. not run).
#[derive(Clone, Debug)]
pub struct BarSeries {
    pub name: String,
    pub values: Vec<Option<Spread>>,
    /// Per row: a word written instead of the value (`does not fit`), or `None`.
    pub notes: Vec<Option<String>>,
}

/// Horizontal bars: a row per category (top to bottom), a bar per series in each row.
#[derive(Clone, Debug)]
pub struct BarChart {
    pub title: String,
    /// The value axis' label, with its unit.
    pub value_label: String,
    pub scale: Scale,
    pub rows: Vec<String>,
    pub series: Vec<BarSeries>,
    /// A vertical line at a value, with its legend entry (capacity, target).
    pub reference: Option<(String, f64)>,
    /// How a bar's value is written at its end.
    pub value_format: fn(f64) -> String,
}

/// Distinct colours, in series order (the Tableau 10 set).
const COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn colour(i: usize) -> RGBColor {
    COLOURS[i % COLOURS.len()]
}

/// Browsers take the first family they have; resvg (PNG) finds DejaVu Sans on Debian.
const FONT: &str = "DejaVu Sans, Arial, Helvetica, sans-serif";

/// A legend entry's mark.
#[derive(Clone, Copy)]
enum Mark {
    Line(RGBColor),
    Box(RGBColor),
}

const LEGEND_ROW: i32 = 26;

/// Positions of legend entries laid out in rows across `width` pixels: `(x, row)` each.
fn legend_layout(names: &[String], width: i32) -> (Vec<(i32, i32)>, i32) {
    let (mut x, mut row, mut out) = (16, 0, vec![]);
    for name in names {
        // 30 px of mark and gap, about 9 px per character at 16 px, 28 px between entries.
        let w = 30 + 9 * name.chars().count() as i32 + 28;
        if x > 16 && x + w > width - 16 {
            x = 16;
            row += 1;
        }
        out.push((x, row));
        x += w;
    }
    let rows = if names.is_empty() { 0 } else { row + 1 };
    (out, rows * LEGEND_ROW + 8)
}

/// Splits the title and a legend strip off the top of `root`; returns the area left for
/// the chart.
fn title_and_legend<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
    entries: &[(String, Mark)],
    path: &Path,
) -> Result<DrawingArea<SVGBackend<'a>, Shift>, ChartError> {
    let err = draw_err(path);
    let area = root.titled(title, (FONT, 26)).map_err(&err)?;
    let width = area.dim_in_pixel().0 as i32;
    let names: Vec<String> = entries.iter().map(|e| e.0.clone()).collect();
    let (at, height) = legend_layout(&names, width);
    let (legend, rest) = area.split_vertically(height);
    for ((name, mark), (x, row)) in entries.iter().zip(at) {
        let y = 4 + row * LEGEND_ROW + LEGEND_ROW / 2;
        match *mark {
            Mark::Line(c) => legend
                .draw(&PathElement::new(
                    vec![(x, y), (x + 24, y)],
                    c.stroke_width(3),
                ))
                .map_err(&err)?,
            Mark::Box(c) => legend
                .draw(&Rectangle::new(
                    [(x + 4, y - 7), (x + 20, y + 7)],
                    c.filled(),
                ))
                .map_err(&err)?,
        }
        legend
            .draw(&Text::new(
                name.clone(),
                (x + 30, y),
                (FONT, 16)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(&err)?;
    }
    Ok(rest)
}

fn draw_err<E: std::error::Error + Send + Sync>(
    path: &Path,
) -> impl Fn(DrawingAreaErrorKind<E>) -> ChartError + '_ {
    move |e| ChartError::Draw {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

fn create_parent(path: &Path) -> Result<(), ChartError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| ChartError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    Ok(())
}

impl LineChart {
    /// Writes the chart as SVG to `path` (parent folders created). Points that are not
    /// finite, or not positive on a log axis, are left out; an error if no point is left.
    pub fn write_svg(&self, path: &Path) -> Result<(), ChartError> {
        let mut chart = self.clone();
        for s in &mut chart.series {
            s.points.retain(|(x, y)| {
                self.x_scale.shows(*x)
                    && [y.min, y.median, y.max]
                        .iter()
                        .all(|v| self.y_scale.shows(*v))
            });
        }
        chart.draw(path)
    }

    fn draw(&self, path: &Path) -> Result<(), ChartError> {
        let points: Vec<&(f64, Spread)> = self.series.iter().flat_map(|s| &s.points).collect();
        if points.is_empty() {
            return Err(ChartError::Empty(format!(
                "{}: no points to draw",
                self.title
            )));
        }
        create_parent(path)?;
        let fold = |f: fn(&(f64, Spread)) -> f64, min: bool| {
            points.iter().map(|p| f(p)).fold(
                if min {
                    f64::INFINITY
                } else {
                    f64::NEG_INFINITY
                },
                if min { f64::min } else { f64::max },
            )
        };
        let xr = self
            .x_scale
            .range(fold(|p| p.0, true), fold(|p| p.0, false));
        let yr = self
            .y_scale
            .range(fold(|p| p.1.min, true), fold(|p| p.1.max, false));
        let root = SVGBackend::new(path, (960, 640)).into_drawing_area();
        let err = draw_err(path);
        root.fill(&WHITE).map_err(&err)?;
        let entries: Vec<(String, Mark)> = self
            .series
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.points.is_empty())
            .map(|(i, s)| (s.name.clone(), Mark::Line(colour(i))))
            .collect();
        let area = title_and_legend(&root, &self.title, &entries, path)?;
        let mut chart = ChartBuilder::on(&area)
            .margin(16)
            .x_label_area_size(52)
            .y_label_area_size(84)
            .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)
            .map_err(&err)?;
        let (xs, ys) = (self.x_scale, self.y_scale);
        let xf = move |a: &f64| xs.label(*a);
        let yf = move |a: &f64| ys.label(*a);
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .x_labels(xs.ticks(xr))
            .y_labels(ys.ticks(yr))
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .label_style((FONT, 17))
            .axis_desc_style((FONT, 19))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(&err)?;
        for (i, s) in self.series.iter().enumerate() {
            if s.points.is_empty() {
                continue;
            }
            let c = colour(i);
            let at = |x: f64, y: f64| (xs.to_axis(x), ys.to_axis(y));
            let mut pts: Vec<(f64, Spread)> = s.points.clone();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(Polyline::new(
                    pts.iter().map(|(x, y)| at(*x, y.median)),
                    c.stroke_width(2),
                ))
                .map_err(&err)?;
            chart
                .draw_series(
                    pts.iter()
                        .map(|(x, y)| Circle::new(at(*x, y.median), 4, c.filled())),
                )
                .map_err(&err)?;
            // Whiskers: min..max with caps, in pixels so the caps do not depend on the scale.
            let area = chart.plotting_area();
            for (x, y) in pts.iter().filter(|(_, y)| y.spreads()) {
                let (top, bottom) = (
                    area.map_coordinate(&at(*x, y.max)),
                    area.map_coordinate(&at(*x, y.min)),
                );
                let style = c.stroke_width(1);
                for seg in [
                    [top, bottom],
                    [(top.0 - 5, top.1), (top.0 + 5, top.1)],
                    [(bottom.0 - 5, bottom.1), (bottom.0 + 5, bottom.1)],
                ] {
                    root.draw(&PathElement::new(seg.to_vec(), style))
                        .map_err(&err)?;
                }
            }
        }
        root.present().map_err(&err)?;
        Ok(())
    }
}

impl BarChart {
    /// Writes the chart as SVG to `path` (parent folders created). A value that is not
    /// finite, or not positive on a log axis, draws no bar; an error if there are no rows
    /// or no series.
    pub fn write_svg(&self, path: &Path) -> Result<(), ChartError> {
        let mut chart = self.clone();
        for s in &mut chart.series {
            for v in &mut s.values {
                if v.is_some_and(|v| {
                    ![v.min, v.median, v.max]
                        .iter()
                        .all(|x| self.scale.shows(*x))
                }) {
                    *v = None;
                }
            }
        }
        chart.draw(path)
    }

    fn draw(&self, path: &Path) -> Result<(), ChartError> {
        if self.rows.is_empty() || self.series.is_empty() {
            return Err(ChartError::Empty(format!(
                "{}: no bars to draw",
                self.title
            )));
        }
        for s in &self.series {
            if s.values.len() != self.rows.len() {
                return Err(ChartError::Empty(format!(
                    "{}: series {} has {} values for {} rows",
                    self.title,
                    s.name,
                    s.values.len(),
                    self.rows.len()
                )));
            }
        }
        create_parent(path)?;
        let values: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .flat_map(|v| [v.min, v.max])
            .chain(self.reference.iter().map(|r| r.1))
            .filter(|v| self.scale == Scale::Linear || *v > 0.0)
            .collect();
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = if values.is_empty() {
            (1.0, 1.0)
        } else {
            (lo, hi)
        };
        let mut xr = self.scale.range(lo, hi);
        // Room for the value written after the longest bar (and its spread).
        let spreads = self
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .any(|v| v.spreads());
        xr.1 += (xr.1 - xr.0) * if spreads { 0.3 } else { 0.12 };
        let n = self.rows.len();
        let label_width = self.rows.iter().map(|r| r.len()).max().unwrap_or(4) as u32 * 8 + 16;
        let height = 140 + (n as u32) * (18 * self.series.len() as u32 + 16).max(36);
        let mut entries: Vec<(String, Mark)> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), Mark::Box(colour(i))))
            .collect();
        if let Some((name, _)) = &self.reference {
            entries.push((name.clone(), Mark::Line(BLACK)));
        }
        let legend_height = legend_layout(
            &entries.iter().map(|e| e.0.clone()).collect::<Vec<_>>(),
            960,
        )
        .1 as u32;
        let root = SVGBackend::new(path, (960, height + legend_height)).into_drawing_area();
        let err = draw_err(path);
        root.fill(&WHITE).map_err(&err)?;
        let area = title_and_legend(&root, &self.title, &entries, path)?;
        let yr = (-0.5, n as f64 - 0.5);
        let mut chart = ChartBuilder::on(&area)
            .margin(16)
            .x_label_area_size(52)
            .y_label_area_size(label_width.clamp(60, 320))
            .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)
            .map_err(&err)?;
        let scale = self.scale;
        let xf = move |a: &f64| scale.label(*a);
        let rows = self.rows.clone();
        let yf = move |a: &f64| {
            let i = a.round();
            if (a - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < rows.len() {
                rows[rows.len() - 1 - i as usize].clone()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .x_desc(&self.value_label)
            .x_labels(scale.ticks(xr))
            .y_labels(n + 1)
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .disable_y_mesh()
            .label_style((FONT, 17))
            .axis_desc_style((FONT, 19))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(&err)?;
        let k = self.series.len() as f64;
        let band = 0.8 / k;
        let base = xr.0.max(if scale == Scale::Linear { 0.0 } else { xr.0 });
        for (si, s) in self.series.iter().enumerate() {
            let c = colour(si);
            for (ri, v) in s.values.iter().enumerate() {
                let centre = (n - 1 - ri) as f64;
                let top = centre + 0.4 - band * si as f64;
                let bottom = top - band * 0.9;
                let mid = (top + bottom) / 2.0;
                let text_at = |x: f64| (x + (xr.1 - xr.0) * 0.008, mid);
                let note = s.notes.get(ri).cloned().flatten();
                let Some(v) = v else {
                    if let Some(note) = note {
                        chart
                            .draw_series(std::iter::once(Text::new(
                                note,
                                text_at(base),
                                (FONT, 16)
                                    .into_font()
                                    .color(&c)
                                    .pos(Pos::new(HPos::Left, VPos::Center)),
                            )))
                            .map_err(&err)?;
                    }
                    continue;
                };
                let end = scale.to_axis(v.median).max(base);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(base, bottom), (end, top)],
                        c.filled(),
                    )))
                    .map_err(&err)?;
                let mut right = end;
                if v.spreads() {
                    let (lo, hi) = (scale.to_axis(v.min).max(base), scale.to_axis(v.max));
                    right = right.max(hi);
                    let h = band * 0.25;
                    chart
                        .draw_series([
                            PathElement::new(vec![(lo, mid), (hi, mid)], BLACK.stroke_width(1)),
                            PathElement::new(
                                vec![(lo, mid - h), (lo, mid + h)],
                                BLACK.stroke_width(1),
                            ),
                            PathElement::new(
                                vec![(hi, mid - h), (hi, mid + h)],
                                BLACK.stroke_width(1),
                            ),
                        ])
                        .map_err(&err)?;
                }
                let text = match (note, v.spreads()) {
                    (Some(note), _) => note,
                    (None, true) => format!(
                        "{} ({} .. {})",
                        (self.value_format)(v.median),
                        (self.value_format)(v.min),
                        (self.value_format)(v.max)
                    ),
                    (None, false) => (self.value_format)(v.median),
                };
                // A bar too short to see says whose it is.
                let text = if end <= base + (xr.1 - xr.0) * 0.01 && self.series.len() > 1 {
                    format!("{}: {text}", s.name)
                } else {
                    text
                };
                chart
                    .draw_series(std::iter::once(Text::new(
                        text,
                        text_at(right),
                        (FONT, 16)
                            .into_font()
                            .color(&BLACK)
                            .pos(Pos::new(HPos::Left, VPos::Center)),
                    )))
                    .map_err(&err)?;
            }
        }
        if let Some((_, value)) = &self.reference {
            let x = scale.to_axis(*value);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, yr.0), (x, yr.1)],
                    BLACK.stroke_width(2),
                )))
                .map_err(&err)?;
        }
        root.present().map_err(&err)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_at_a_glance() {
        assert_eq!(number(950.0), "950");
        assert_eq!(number(12_500.0), "12.5 k");
        assert_eq!(number(13_200_000.0), "13.2 M");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(0.10), "0.1");
        assert_eq!(number(1200.0), "1.2 k");
        assert_eq!(number(3.0), "3");
        assert_eq!(binary(4096.0), "4 Ki");
        assert_eq!(binary(64.0), "64");
    }

    #[test]
    fn log_ticks_fall_on_powers() {
        let r = Scale::Log2.range(2.0, 64.0);
        assert_eq!(r, (0.75, 6.25));
        assert_eq!(Scale::Log2.label(3.0), "8");
        assert_eq!(Scale::Log2.label(3.5), "");
        assert_eq!(Scale::Log10.label(6.0), "1 M");
        assert_eq!(Scale::Log10.range(5e3, 1.3e7), (2.75, 8.25));
    }

    #[test]
    fn spread_of_values() {
        let s = Spread::of([3.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!((s.min, s.median, s.max), (1.0, 2.0, 10.0));
        assert!(Spread::of(Vec::<f64>::new()).is_none());
    }
}
