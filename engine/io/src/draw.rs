//! What stgflow's pictures share (`stgflow plot`'s timelines, the bench harness's
//! charts): a bundled font and a colour-blind-safe palette.
//!
//! Pitfall: plotters needs a font to lay out text, and a fresh machine may have none
//! installed. DejaVu Sans is bundled (`assets/`, its licence beside it) and registered as
//! `sans-serif`, so pictures look the same everywhere.

use std::sync::Once;

use plotters::style::{FontStyle, RGBColor};

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Okabe and Ito's palette, without its yellow (too light on white).
pub const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(230, 159, 0),
    RGBColor(0, 0, 0),
];

/// The `i`-th colour of [`PALETTE`], round again after the last.
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The bundled font's TrueType bytes (DejaVu Sans), for pictures drawn by other means.
pub fn font() -> &'static [u8] {
    FONT
}

/// The bundled font's family name.
pub const FONT_FAMILY: &str = "DejaVu Sans";

/// Registers the bundled font as `sans-serif` (once per process).
pub fn register_font() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // The bundled font is a valid TrueType file; a failure here would only leave the
        // pictures without text, which drawing then reports as an error.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}
