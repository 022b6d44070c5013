//! Where a new whiteboard element goes. Agents place elements by coordinates and often stack
//! them on top of each other (OpenMAIC's most-reported whiteboard complaint); this nudges a new
//! element clear of the ones already there when it would cover too much of one, and always
//! keeps it on the canvas inside the safe margin. Pure and deterministic, so a seek that
//! replays the board lands every element where playing did.

use aula_course::{CANVAS_HEIGHT, CANVAS_WIDTH};

use crate::Rect;

/// The safe margin the prompts promise the agents, on every side of the canvas.
pub const MARGIN: f64 = 20.0;
/// An overlap is bad when it covers more than this share of the smaller element.
pub const BAD_OVERLAP: f64 = 0.15;
/// Space left between a nudged element and the one it was moved away from.
pub const GAP: f64 = 12.0;
/// Step of the last-resort scan over the whole canvas.
const SCAN_STEP: f64 = 20.0;

impl Rect {
    pub fn area(&self) -> f64 {
        self.width.max(0.0) * self.height.max(0.0)
    }

    /// The area this and `other` share.
    pub fn intersection(&self, other: &Rect) -> f64 {
        let w = (self.x + self.width).min(other.x + other.width) - self.x.max(other.x);
        let h = (self.y + self.height).min(other.y + other.height) - self.y.max(other.y);
        w.max(0.0) * h.max(0.0)
    }

    /// The shared area as a share of the smaller of the two (0 when either is empty).
    pub fn overlap_share(&self, other: &Rect) -> f64 {
        let smaller = self.area().min(other.area());
        if smaller <= 0.0 {
            0.0
        } else {
            self.intersection(other) / smaller
        }
    }
}

/// `rect` with a size that fits inside the margins and a position that keeps it there.
/// Non-finite numbers become 0.
pub fn fit_to_canvas(rect: Rect) -> Rect {
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let width = finite(rect.width).clamp(0.0, CANVAS_WIDTH - 2.0 * MARGIN);
    let height = finite(rect.height).clamp(0.0, CANVAS_HEIGHT - 2.0 * MARGIN);
    Rect {
        x: finite(rect.x).clamp(MARGIN, CANVAS_WIDTH - MARGIN - width),
        y: finite(rect.y).clamp(MARGIN, CANVAS_HEIGHT - MARGIN - height),
        width,
        height,
    }
}

fn overlaps_badly(rect: &Rect, existing: &[Rect]) -> bool {
    existing.iter().any(|e| rect.overlap_share(e) > BAD_OVERLAP)
}

/// Where the new element `new` goes, given the elements already on the board. Inside the
/// canvas margins always; exactly where asked (once fitted to the canvas) unless that covers
/// more than [`BAD_OVERLAP`] of an existing element, in which case the nearest spot beside an
/// existing element (or, failing that, anywhere on the canvas) that covers none badly. With no
/// such spot, the one that covers least.
pub fn place(new: Rect, existing: &[Rect]) -> Rect {
    let wanted = fit_to_canvas(new);
    if !overlaps_badly(&wanted, existing) {
        return wanted;
    }
    let at = |x: f64, y: f64| fit_to_canvas(Rect { x, y, ..wanted });
    let distance = |r: &Rect| (r.x - wanted.x).hypot(r.y - wanted.y);
    let nearest_clear = |candidates: &mut dyn Iterator<Item = Rect>| {
        candidates
            .filter(|r| !overlaps_badly(r, existing))
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))
    };

    // Beside each existing element: right, left, below, above, keeping the other coordinate.
    let (w, h) = (wanted.width, wanted.height);
    let mut beside = existing.iter().flat_map(|e| {
        [
            at(e.x + e.width + GAP, wanted.y),
            at(e.x - GAP - w, wanted.y),
            at(wanted.x, e.y + e.height + GAP),
            at(wanted.x, e.y - GAP - h),
            at(e.x + e.width + GAP, e.y),
            at(e.x, e.y + e.height + GAP),
        ]
    });
    if let Some(spot) = nearest_clear(&mut beside) {
        return spot;
    }

    let columns = ((CANVAS_WIDTH - 2.0 * MARGIN - w) / SCAN_STEP)
        .floor()
        .max(0.0) as usize;
    let rows = ((CANVAS_HEIGHT - 2.0 * MARGIN - h) / SCAN_STEP)
        .floor()
        .max(0.0) as usize;
    let grid = || {
        (0..=rows).flat_map(move |r| {
            (0..=columns)
                .map(move |c| (MARGIN + c as f64 * SCAN_STEP, MARGIN + r as f64 * SCAN_STEP))
        })
    };
    let mut scan = grid().map(|(x, y)| at(x, y));
    if let Some(spot) = nearest_clear(&mut scan) {
        return spot;
    }

    // A full board: cover as little as possible.
    let covered = |r: &Rect| existing.iter().map(|e| r.intersection(e)).sum::<f64>();
    grid()
        .map(|(x, y)| at(x, y))
        .chain(std::iter::once(wanted))
        .min_by(|a, b| {
            covered(a)
                .total_cmp(&covered(b))
                .then(distance(a).total_cmp(&distance(b)))
        })
        .unwrap_or(wanted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rect(x: f64, y: f64, width: f64, height: f64) -> Rect {
        Rect {
            x,
            y,
            width,
            height,
        }
    }

    fn inside_canvas(r: &Rect) -> bool {
        let e = 1e-9;
        r.x >= MARGIN - e
            && r.y >= MARGIN - e
            && r.x + r.width <= CANVAS_WIDTH - MARGIN + e
            && r.y + r.height <= CANVAS_HEIGHT - MARGIN + e
    }

    #[test]
    fn an_element_that_overlaps_nothing_stays_where_it_was_asked() {
        let existing = [rect(40.0, 40.0, 300.0, 100.0)];
        let new = rect(400.0, 40.0, 300.0, 100.0);
        assert_eq!(place(new, &existing), new);
    }

    #[test]
    fn a_small_overlap_is_tolerated() {
        // 10 px of a 100 px high box: 10% of the smaller one.
        let existing = [rect(40.0, 40.0, 300.0, 100.0)];
        let new = rect(40.0, 130.0, 300.0, 100.0);
        assert_eq!(place(new, &existing), new);
    }

    #[test]
    fn an_element_drawn_on_top_of_another_is_moved_beside_it() {
        let existing = [rect(100.0, 60.0, 400.0, 100.0)];
        let placed = place(rect(120.0, 80.0, 400.0, 100.0), &existing);
        assert!(
            placed.overlap_share(&existing[0]) <= BAD_OVERLAP,
            "{placed:?}"
        );
        assert_eq!(placed.intersection(&existing[0]), 0.0);
        assert!(inside_canvas(&placed));
        // The nearest clear spot: straight below the existing box.
        assert_eq!(placed, rect(120.0, 60.0 + 100.0 + GAP, 400.0, 100.0));
    }

    #[test]
    fn a_crowded_board_still_finds_the_free_corner() {
        // Three of the four quadrants are taken.
        let existing = [
            rect(20.0, 20.0, 470.0, 250.0),
            rect(510.0, 20.0, 470.0, 250.0),
            rect(20.0, 290.0, 470.0, 250.0),
        ];
        let placed = place(rect(30.0, 30.0, 400.0, 200.0), &existing);
        assert!(existing
            .iter()
            .all(|e| placed.overlap_share(e) <= BAD_OVERLAP));
        assert!(placed.x >= 490.0 && placed.y >= 270.0, "{placed:?}");
        assert!(inside_canvas(&placed));
    }

    #[test]
    fn an_element_off_the_canvas_or_too_big_is_brought_inside_the_margins() {
        let placed = place(rect(900.0, 500.0, 300.0, 200.0), &[]);
        assert_eq!(placed, rect(680.0, 342.5, 300.0, 200.0));
        let huge = place(rect(-50.0, -50.0, 5000.0, 5000.0), &[]);
        assert_eq!(huge, rect(20.0, 20.0, 960.0, 522.5));
        let broken = place(rect(f64::NAN, f64::INFINITY, f64::NAN, 10.0), &[]);
        assert!(inside_canvas(&broken));
    }

    #[test]
    fn a_full_board_gets_the_least_covered_spot_and_never_leaves_the_canvas() {
        let existing = [rect(20.0, 20.0, 960.0, 522.5)];
        let placed = place(rect(100.0, 100.0, 200.0, 100.0), &existing);
        assert!(inside_canvas(&placed));
    }

    fn arbitrary_rect() -> impl Strategy<Value = Rect> {
        (
            -200.0..1200.0f64,
            -200.0..800.0f64,
            0.0..1200.0f64,
            0.0..700.0f64,
        )
            .prop_map(|(x, y, w, h)| rect(x, y, w, h))
    }

    proptest! {
        #[test]
        fn placement_never_leaves_the_canvas(
            new in arbitrary_rect(),
            existing in prop::collection::vec(arbitrary_rect(), 0..8),
        ) {
            prop_assert!(inside_canvas(&place(new, &existing)));
        }

        #[test]
        fn placement_is_stable_when_nothing_overlaps_badly(
            new in arbitrary_rect(),
            existing in prop::collection::vec(arbitrary_rect(), 0..8),
        ) {
            let fitted = fit_to_canvas(new);
            prop_assume!(!overlaps_badly(&fitted, &existing));
            prop_assert_eq!(place(new, &existing), fitted);
        }

        #[test]
        fn small_elements_on_a_sparse_board_end_up_clear_of_every_other(
            new in (0.0..1000.0f64, 0.0..560.0f64, 20.0..200.0f64, 20.0..120.0f64),
            spots in prop::collection::vec((0usize..4, 0usize..3), 0..4),
        ) {
            // Up to four 200 × 120 boxes on a 4 × 3 grid of cells: there is always room.
            let existing: Vec<Rect> = spots
                .iter()
                .map(|&(c, r)| rect(30.0 + c as f64 * 240.0, 30.0 + r as f64 * 170.0, 200.0, 120.0))
                .collect();
            let placed = place(rect(new.0, new.1, new.2, new.3), &existing);
            prop_assert!(inside_canvas(&placed));
            for e in &existing {
                prop_assert!(placed.overlap_share(e) <= BAD_OVERLAP, "{:?} covers {:?}", placed, e);
            }
        }
    }
}
