//! SVG to PNG with resvg (linebender's renderer: pure Rust, maintained, the reference
//! for SVG conformance among Rust renderers). Text needs a font installed on the
//! system; DejaVu Sans Mono is asked for first.

use crate::WaveError;
use resvg::{tiny_skia, usvg};
use std::path::Path;

/// Rasterise an SVG document (as [`super::render_svg`] writes) into PNG bytes.
/// `path` names the output in errors.
pub fn svg_to_png(svg: &str, path: &Path) -> Result<Vec<u8>, WaveError> {
    let fail = |message: String| WaveError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_system_fonts();
    fonts.set_monospace_family("DejaVu Sans Mono");
    if fonts.is_empty() {
        return Err(fail(
            "no system font found, so the PNG would have no text; install one (e.g. the \
             Debian package fonts-dejavu-core) or use the SVG"
                .into(),
        ));
    }
    let tree = usvg::Tree::from_str(svg, &options)
        .map_err(|e| fail(format!("the SVG does not parse: {e}")))?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| {
        fail(format!(
            "cannot make a {}x{} picture",
            size.width(),
            size.height()
        ))
    })?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap
        .encode_png()
        .map_err(|e| fail(format!("PNG encoding failed: {e}")))
}
