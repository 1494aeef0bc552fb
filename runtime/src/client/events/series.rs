//! The events published lately, so that the same event again adds to the count of the first
//! (an event series: `kubectl describe` shows "(x4 over 3m)") rather than making another
//! object.
//!
//! The memory is bounded in time and in size. A series ends [`SERIES_WINDOW`] after the event
//! was last seen, as the Kubernetes event libraries end theirs, and at most [`CAPACITY`] series
//! are remembered: a manager that starts over 10,000 objects publishes tens of thousands of
//! events within minutes, and remembering each of them (as kube's `Recorder` does, object and
//! all) would cost more memory than the objects themselves. A series forgotten early only
//! means that its next event starts a new one.
//!
//! Each series is remembered by a hash of what makes two events the same, not by that text:
//! its Event's name and namespace besides, whatever the note's length.

use ::std::collections::HashMap;
use ::std::hash::{BuildHasher as _, Hash, RandomState};

use ::tokio::time::{Duration, Instant};

/// How long after an event was last seen the same event still adds to its series.
pub(super) const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);

/// The most series remembered at once.
pub(super) const CAPACITY: usize = 4096;

/// The Event object of a series, and how often it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Published {
    pub(super) name: String,
    pub(super) namespace: String,
    pub(super) count: i32,
}

struct Entry {
    published: Published,
    last_seen: Instant,
}

/// The series of the events published in the last [`SERIES_WINDOW`], at most [`CAPACITY`].
#[derive(Default)]
pub(super) struct Series {
    entries: HashMap<u64, Entry>,
    hasher: RandomState,
}

impl Series {
    /// The key of an event whose identity is `parts`.
    pub(super) fn key(&self, parts: impl Hash) -> u64 {
        self.hasher.hash_one(parts)
    }

    /// The series of `key` with this occurrence counted, if one is still open at `now`.
    pub(super) fn seen_again(&mut self, key: u64, now: Instant) -> Option<Published> {
        let entry = self.entries.get_mut(&key)?;
        if now.duration_since(entry.last_seen) >= SERIES_WINDOW {
            self.entries.remove(&key);
            return None;
        }
        entry.published.count = entry.published.count.saturating_add(1);
        entry.last_seen = now;
        Some(entry.published.clone())
    }

    /// Starts the series of `key`: the event `name` in `namespace`, published at `now`.
    pub(super) fn published(&mut self, key: u64, name: String, namespace: String, now: Instant) {
        if !self.entries.contains_key(&key) {
            self.make_room(now);
        }
        let published = Published {
            name,
            namespace,
            count: 1,
        };
        self.entries.insert(
            key,
            Entry {
                published,
                last_seen: now,
            },
        );
    }

    /// Ends the series of `key` (its Event object is gone).
    pub(super) fn forget(&mut self, key: u64) {
        self.entries.remove(&key);
    }

    /// Makes room for one more series when [`CAPACITY`] are remembered: the ended ones go,
    /// then, if more than three quarters of [`CAPACITY`] are left, those seen longest ago. Both
    /// walk every series; leaving a quarter free makes that happen at most once in every
    /// `CAPACITY / 4` new series.
    fn make_room(&mut self, now: Instant) {
        if self.entries.len() < CAPACITY {
            return;
        }
        self.entries
            .retain(|_, entry| now.duration_since(entry.last_seen) < SERIES_WINDOW);
        let keep = CAPACITY - CAPACITY / 4;
        if self.entries.len() <= keep {
            return;
        }
        let mut last_seen: Vec<Instant> = self.entries.values().map(|e| e.last_seen).collect();
        let oldest = self.entries.len() - keep;
        let (_, &mut cutoff, _) = last_seen.select_nth_unstable(oldest - 1);
        self.entries.retain(|_, entry| entry.last_seen > cutoff);
    }
}

#[cfg(test)]
mod tests;
