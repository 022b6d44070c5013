//! A chart's values made fit for arithmetic, and its value axis: the one definition the page's
//! SVG charts and the PowerPoint writer's native charts both draw by. Chart data comes from the
//! course, so nothing is trusted: values are made finite and bounded, and an axis always has
//! round, finite ticks.

/// Values beyond this are clamped, so sums and ranges of any series stay finite.
pub const VALUE_LIMIT: f64 = 1e15;

/// A value fit for arithmetic: finite and bounded.
pub fn value(v: f64) -> f64 {
    if v.is_finite() {
        v.clamp(-VALUE_LIMIT, VALUE_LIMIT)
    } else {
        0.0
    }
}

/// The range of `values` widened to include zero.
pub fn extent_with_zero<'a>(values: impl Iterator<Item = &'a f64>) -> (f64, f64) {
    values.fold((0.0, 0.0), |(lo, hi), v| {
        let v = value(*v);
        (lo.min(v), hi.max(v))
    })
}

/// A value axis: its range and a few round ticks.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub min: f64,
    pub max: f64,
    pub step: f64,
    /// Tick labels are divided by this and given the suffix (`k`, `M`, …).
    unit: (f64, &'static str),
    decimals: usize,
}

impl Scale {
    /// Round bounds covering `lo..=hi` with about `ticks` steps of 1, 2, 2.5 or 5 × 10ⁿ.
    pub fn nice(lo: f64, hi: f64, ticks: usize) -> Scale {
        let (mut lo, mut hi) = (value(lo.min(hi)), value(lo.max(hi)));
        if hi - lo <= hi.abs().max(lo.abs()) * 1e-9 {
            if lo == 0.0 {
                hi = 1.0;
            } else {
                let pad = lo.abs() * 0.5;
                lo -= pad;
                hi += pad;
            }
        }
        let raw = (hi - lo) / ticks.max(1) as f64;
        let magnitude = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0]
            .iter()
            .map(|m| m * magnitude)
            .find(|s| *s >= raw * (1.0 - 1e-9))
            .unwrap_or(10.0 * magnitude);
        let (min, max) = ((lo / step).floor() * step, (hi / step).ceil() * step);
        let sane = step.is_finite()
            && step > 0.0
            && min.is_finite()
            && max.is_finite()
            && max > min
            && (max - min) / step <= 40.0;
        if !sane {
            return Scale::with_step(0.0, 1.0, 0.25);
        }
        Scale::with_step(min, max, step)
    }

    fn with_step(min: f64, max: f64, step: f64) -> Scale {
        let largest = min.abs().max(max.abs());
        let unit = [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e4, "k")]
            .into_iter()
            .find(|(size, _)| largest >= *size)
            .unwrap_or((1.0, ""));
        let scaled = step / unit.0;
        let decimals = (0..=6)
            .find(|d| {
                let shifted = scaled * 10f64.powi(*d);
                (shifted - shifted.round()).abs() < 1e-6 * shifted.abs().max(1.0)
            })
            .unwrap_or(6) as usize;
        Scale {
            min,
            max,
            step,
            unit,
            decimals,
        }
    }

    pub fn ticks(&self) -> impl Iterator<Item = f64> + '_ {
        let count = ((self.max - self.min) / self.step).round() as usize;
        (0..=count).map(move |k| self.min + k as f64 * self.step)
    }

    /// Where `v` sits between the axis ends, 0 to 1.
    pub fn fraction(&self, v: f64) -> f64 {
        ((value(v) - self.min) / (self.max - self.min)).clamp(0.0, 1.0)
    }

    pub fn label(&self, tick: f64) -> String {
        let scaled = tick / self.unit.0;
        let scaled = if scaled.abs() < 0.5 * 10f64.powi(-(self.decimals as i32)) {
            0.0
        } else {
            scaled
        };
        format!("{scaled:.*}{}", self.decimals, self.unit.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_scale_picks_round_ticks_that_include_zero() {
        let scale = Scale::nice(-5.0, 10.0, 5);
        let ticks: Vec<String> = scale.ticks().map(|t| scale.label(t)).collect();
        assert_eq!(ticks, ["-5", "0", "5", "10"]);

        let big = Scale::nice(0.0, 2_500_000.0, 5);
        assert_eq!(big.label(big.max), "2.5M");
        let small = Scale::nice(0.0, 0.3, 3);
        assert_eq!(small.label(small.step), "0.1");
    }

    #[test]
    fn values_are_finite_and_bounded_and_a_flat_or_broken_range_still_has_an_axis() {
        assert_eq!(value(f64::NAN), 0.0);
        assert_eq!(value(f64::INFINITY), 0.0);
        assert_eq!(value(1e300), VALUE_LIMIT);
        assert_eq!(extent_with_zero([3.0, 7.0].iter()), (0.0, 7.0));
        assert_eq!(extent_with_zero([-2.0, f64::NAN].iter()), (-2.0, 0.0));
        let flat = Scale::nice(5.0, 5.0, 4);
        assert!(flat.min < 5.0 && flat.max > 5.0, "{flat:?}");
        let wild = Scale::nice(-1e300, 1e300, 4);
        assert!(wild.ticks().count() <= 41 && wild.ticks().all(f64::is_finite));
    }
}
