//! The server's slots, as llama.cpp has them: at most `limit` chat requests are served at
//! once; the others wait, without spinning, and are served in the order they arrived.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How often a waiting request looks whether its client is still there.
const CHECK_EVERY: Duration = Duration::from_millis(100);

#[derive(Debug, Default)]
struct Line {
    /// `None`: as many at once as come.
    limit: Option<usize>,
    busy: usize,
    /// Tickets of the waiting requests, first come first.
    waiting: VecDeque<u64>,
    next_ticket: u64,
}

impl Line {
    fn may_start(&self, ticket: u64) -> bool {
        self.waiting.front() == Some(&ticket) && self.limit.is_none_or(|l| self.busy < l)
    }
}

#[derive(Debug, Default)]
pub struct Slots {
    line: Mutex<Line>,
    changed: Condvar,
}

/// A slot held while a request is served; dropping it frees the slot for the next in line.
#[derive(Debug)]
pub struct Slot<'a> {
    slots: &'a Slots,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut line = self.slots.lock();
        line.busy = line.busy.saturating_sub(1);
        self.slots.changed.notify_all();
    }
}

impl Slots {
    pub fn new(limit: Option<usize>) -> Slots {
        Slots {
            line: Mutex::new(Line {
                limit,
                ..Line::default()
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Line> {
        self.line
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A new script may change the number of slots; those waiting see it at once.
    pub fn set_limit(&self, limit: Option<usize>) {
        self.lock().limit = limit;
        self.changed.notify_all();
    }

    /// Waits for this request's turn; `None` when `client_gone` says its client hung up
    /// first (it then leaves the line, as llama.cpp drops a cancelled task).
    pub fn take(&self, mut client_gone: impl FnMut() -> bool) -> Option<Slot<'_>> {
        let mut line = self.lock();
        let ticket = line.next_ticket;
        line.next_ticket += 1;
        line.waiting.push_back(ticket);
        loop {
            if line.may_start(ticket) {
                line.waiting.pop_front();
                line.busy += 1;
                // The next in line may fit too.
                self.changed.notify_all();
                return Some(Slot { slots: self });
            }
            line = match self.changed.wait_timeout(line, CHECK_EVERY) {
                Ok((line, _)) => line,
                Err(poisoned) => poisoned.into_inner().0,
            };
            drop(line);
            let gone = client_gone();
            line = self.lock();
            if gone {
                line.waiting.retain(|t| *t != ticket);
                self.changed.notify_all();
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;
    use std::time::Instant;

    #[test]
    fn one_slot_serves_requests_one_after_another_in_arrival_order() {
        let slots = Arc::new(Slots::new(Some(1)));
        let order = Arc::new(Mutex::new(Vec::new()));
        let first = slots.take(|| false).unwrap();
        let waiters: Vec<_> = (0..3)
            .map(|k| {
                let (mine, order) = (slots.clone(), order.clone());
                let waiter = thread::spawn(move || {
                    let _slot = mine.take(|| false).unwrap();
                    order.lock().unwrap().push(k);
                    thread::sleep(Duration::from_millis(10));
                });
                // Let each one queue before the next arrives.
                while slots.lock().waiting.len() < k + 1 {
                    thread::yield_now();
                }
                waiter
            })
            .collect();
        thread::sleep(Duration::from_millis(50));
        assert!(
            order.lock().unwrap().is_empty(),
            "nobody starts while the slot is busy"
        );
        drop(first);
        for waiter in waiters {
            waiter.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2]);
    }

    #[test]
    fn a_waiter_whose_client_left_leaves_the_line() {
        let slots = Slots::new(Some(1));
        let _busy = slots.take(|| false).unwrap();
        let began = Instant::now();
        assert!(slots.take(|| began.elapsed() > CHECK_EVERY).is_none());
        assert!(slots.lock().waiting.is_empty());
    }

    #[test]
    fn raising_the_limit_lets_the_waiting_start() {
        let slots = Arc::new(Slots::new(Some(1)));
        let busy = slots.take(|| false).unwrap();
        let waiter = {
            let slots = slots.clone();
            thread::spawn(move || slots.take(|| false).is_some())
        };
        while slots.lock().waiting.is_empty() {
            thread::yield_now();
        }
        slots.set_limit(None);
        assert!(waiter.join().unwrap());
        drop(busy);
        assert_eq!(slots.lock().busy, 0);
    }
}
