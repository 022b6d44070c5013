//! The player: a playback state machine over one resolved [`Timeline`]. It keeps the position,
//! the state (idle, playing, paused, ended), the speed and which segments are showing, and tells
//! the view what started and ended. It never reads a clock: every call that needs the time is
//! given `now_ms` by the caller (the browser's clock in the app, plain numbers in tests).
//!
//! Positions are content time at 1× speed, as the timeline resolves them; speed only changes how
//! fast wall time moves the position. This crate is pure: it must never depend on a browser
//! type, a timer, an async runtime, or any Aula crate but the timeline (and course through it).

use aula_timeline::{Segment, Timeline};
use thiserror::Error;

/// The slowest and fastest playback speeds.
pub const MIN_SPEED: f64 = 0.25;
pub const MAX_SPEED: f64 = 4.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaybackState {
    /// Not started yet.
    Idle,
    Playing,
    Paused,
    /// Reached the end of the timeline.
    Ended,
}

/// What the view should do, in the order it happened.
#[derive(Debug, Clone, PartialEq)]
pub enum PlaybackEvent {
    StateChanged(PlaybackState),
    /// The position jumped; the view rebuilds what a seek skipped over.
    Seeked {
        position_ms: u64,
    },
    /// A segment (an index into the timeline's segments) began. `offset_ms` is how far into it
    /// playback already is: 0 normally, more after a seek into its middle or a late clock tick.
    SegmentStarted {
        segment: usize,
        offset_ms: u64,
    },
    SegmentEnded {
        segment: usize,
    },
}

#[derive(Debug, Error, PartialEq)]
pub enum PlayerError {
    #[error("Playback speed {0}× is not available; choose between 0.25× and 4×.")]
    UnsupportedSpeed(f64),
}

/// The position `position_ms` was reached at wall time `wall_ms`.
#[derive(Debug, Clone, Copy)]
struct Anchor {
    wall_ms: u64,
    position_ms: u64,
}

#[derive(Debug, Clone)]
pub struct Player {
    timeline: Timeline,
    /// Segment indices by start time (then script order): the order segments begin in.
    by_start: Vec<usize>,
    /// Into `by_start`: the first segment that has not begun.
    next: usize,
    /// Segments showing now, in script order.
    active: Vec<usize>,
    state: PlaybackState,
    position_ms: u64,
    speed: f64,
    anchor: Option<Anchor>,
}

impl Player {
    pub fn new(timeline: Timeline) -> Player {
        let mut by_start: Vec<usize> = (0..timeline.segments.len()).collect();
        by_start.sort_by_key(|&i| (timeline.segments[i].start_ms, i));
        Player {
            timeline,
            by_start,
            next: 0,
            active: Vec::new(),
            state: PlaybackState::Idle,
            position_ms: 0,
            speed: 1.0,
            anchor: None,
        }
    }

    pub fn state(&self) -> PlaybackState {
        self.state
    }

    pub fn speed(&self) -> f64 {
        self.speed
    }

    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The position as of the last call.
    pub fn position_ms(&self) -> u64 {
        self.position_ms
    }

    /// Indices of the segments showing now, in script order.
    pub fn active_segments(&self) -> &[usize] {
        &self.active
    }

    /// Starts or resumes playback. From the end, starts over.
    pub fn play(&mut self, now_ms: u64) -> Vec<PlaybackEvent> {
        let mut events = Vec::new();
        match self.state {
            PlaybackState::Playing => return events,
            PlaybackState::Ended => {
                // Start over without passing through a visible pause.
                self.state = PlaybackState::Paused;
                events.extend(self.seek(0, now_ms));
            }
            PlaybackState::Idle | PlaybackState::Paused => {}
        }
        self.state = PlaybackState::Playing;
        self.anchor = Some(Anchor {
            wall_ms: now_ms,
            position_ms: self.position_ms,
        });
        events.push(PlaybackEvent::StateChanged(PlaybackState::Playing));
        events.extend(self.advance(now_ms));
        events
    }

    /// Pauses, keeping what is showing on screen.
    pub fn pause(&mut self, now_ms: u64) -> Vec<PlaybackEvent> {
        if self.state != PlaybackState::Playing {
            return Vec::new();
        }
        let mut events = self.advance(now_ms);
        if self.state == PlaybackState::Playing {
            self.state = PlaybackState::Paused;
            self.anchor = None;
            events.push(PlaybackEvent::StateChanged(PlaybackState::Paused));
        }
        events
    }

    /// Jumps to `position_ms` (clamped to the timeline). Segments that were showing and are not
    /// at the new position end; segments the new position falls inside of start part-way.
    pub fn seek(&mut self, position_ms: u64, now_ms: u64) -> Vec<PlaybackEvent> {
        let to = position_ms.min(self.timeline.total_ms);
        let segments = &self.timeline.segments;
        let inside = |s: &Segment| s.start_ms < to && to < s.end_ms();
        let mut events = vec![PlaybackEvent::Seeked { position_ms: to }];

        let (keep, leave): (Vec<usize>, Vec<usize>) =
            self.active.iter().partition(|&&i| inside(&segments[i]));
        events.extend(
            leave
                .into_iter()
                .map(|segment| PlaybackEvent::SegmentEnded { segment }),
        );
        let mut active = keep;
        for (i, segment) in segments.iter().enumerate() {
            if inside(segment) && !active.contains(&i) {
                active.push(i);
                events.push(PlaybackEvent::SegmentStarted {
                    segment: i,
                    offset_ms: to - segment.start_ms,
                });
            }
        }
        active.sort_unstable();
        self.active = active;
        self.next = self
            .by_start
            .partition_point(|&i| segments[i].start_ms < to);
        self.position_ms = to;

        match self.state {
            PlaybackState::Playing => {
                self.anchor = Some(Anchor {
                    wall_ms: now_ms,
                    position_ms: to,
                })
            }
            PlaybackState::Ended if to < self.timeline.total_ms => {
                self.state = PlaybackState::Paused;
                events.push(PlaybackEvent::StateChanged(PlaybackState::Paused));
            }
            _ => {}
        }
        events
    }

    /// Changes the speed from now on.
    pub fn set_speed(
        &mut self,
        speed: f64,
        now_ms: u64,
    ) -> Result<Vec<PlaybackEvent>, PlayerError> {
        if !(MIN_SPEED..=MAX_SPEED).contains(&speed) {
            return Err(PlayerError::UnsupportedSpeed(speed));
        }
        let events = self.advance(now_ms);
        self.speed = speed;
        if self.state == PlaybackState::Playing {
            self.anchor = Some(Anchor {
                wall_ms: now_ms,
                position_ms: self.position_ms,
            });
        }
        Ok(events)
    }

    /// Moves the position to where the clock says it is and reports what began and ended on the
    /// way, in time order. Does nothing unless playing.
    pub fn advance(&mut self, now_ms: u64) -> Vec<PlaybackEvent> {
        let (PlaybackState::Playing, Some(anchor)) = (self.state, self.anchor) else {
            return Vec::new();
        };
        let elapsed = now_ms.saturating_sub(anchor.wall_ms) as f64 * self.speed;
        let target = (anchor.position_ms + elapsed as u64).min(self.timeline.total_ms);
        let mut events = self.sweep_to(target.max(self.position_ms));
        if self.position_ms >= self.timeline.total_ms {
            self.state = PlaybackState::Ended;
            self.anchor = None;
            events.push(PlaybackEvent::StateChanged(PlaybackState::Ended));
        }
        events
    }

    /// Begins every segment starting by `to` and ends every segment over by `to`.
    fn sweep_to(&mut self, to: u64) -> Vec<PlaybackEvent> {
        let segments = &self.timeline.segments;
        let first_new = self.active.len();
        while let Some(&i) = self.by_start.get(self.next) {
            if segments[i].start_ms > to {
                break;
            }
            self.active.push(i);
            self.next += 1;
        }
        // At one instant, what was already showing ends first; then what begins there begins,
        // in script order, a zero-length segment ending right after its own start.
        let mut timed: Vec<(u64, bool, usize, bool)> = Vec::new(); // (time, begins here, segment, is end)
        for (k, &i) in self.active.iter().enumerate() {
            let s = &segments[i];
            let new = k >= first_new;
            if new {
                timed.push((s.start_ms, true, i, false));
            }
            if s.end_ms() <= to {
                let blinks = new && s.duration_ms == 0;
                timed.push((s.end_ms(), blinks, i, true));
            }
        }
        timed.sort_unstable();
        let events = timed
            .into_iter()
            .map(|(_, _, i, is_end)| {
                if is_end {
                    PlaybackEvent::SegmentEnded { segment: i }
                } else {
                    PlaybackEvent::SegmentStarted {
                        segment: i,
                        offset_ms: to.min(segments[i].end_ms()) - segments[i].start_ms,
                    }
                }
            })
            .collect();
        self.active.retain(|&i| segments[i].end_ms() > to);
        self.active.sort_unstable();
        self.position_ms = to;
        events
    }
}

#[cfg(test)]
mod tests;
