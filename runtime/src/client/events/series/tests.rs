use ::tokio::time::{Duration, Instant};

use super::{CAPACITY, Published, SERIES_WINDOW, Series};

fn start(series: &mut Series, key: u64, now: Instant) {
    series.published(key, format!("event-{key}"), "default".to_owned(), now);
}

#[test]
fn the_same_event_within_the_window_counts_on_the_first() {
    let mut series = Series::default();
    let key = series.key(("Normal", "Created", "widget-a"));
    let t0 = Instant::now();
    start(&mut series, key, t0);

    let again = series.seen_again(key, t0 + Duration::from_secs(10));
    let expected = Published {
        name: format!("event-{key}"),
        namespace: "default".to_owned(),
        count: 2,
    };
    assert_eq!(again, Some(expected));
    // The window runs from the last occurrence, not the first.
    let third = series.seen_again(key, t0 + SERIES_WINDOW + Duration::from_secs(5));
    assert_eq!(third.map(|p| p.count), Some(3));
}

#[test]
fn a_series_ends_a_window_after_its_last_event() {
    let mut series = Series::default();
    let key = series.key(("Normal", "Created", "widget-a"));
    let t0 = Instant::now();
    start(&mut series, key, t0);

    assert_eq!(series.seen_again(key, t0 + SERIES_WINDOW), None);
    assert_eq!(series.entries.len(), 0, "an ended series is forgotten");
}

#[test]
fn different_events_have_different_keys() {
    let series = Series::default();
    assert_ne!(
        series.key(("Normal", "Scaled", "from 1 to 3")),
        series.key(("Normal", "Scaled", "from 3 to 1"))
    );
    assert_eq!(
        series.key(("Normal", "Scaled", "from 1 to 3")),
        series.key(("Normal", "Scaled", "from 1 to 3"))
    );
}

#[test]
fn ended_series_make_room_before_live_ones() {
    let mut series = Series::default();
    let t0 = Instant::now();
    for key in 0..CAPACITY as u64 {
        start(&mut series, key, t0);
    }
    let later = t0 + SERIES_WINDOW;
    start(&mut series, u64::MAX, later);
    assert_eq!(
        series.entries.len(),
        1,
        "every series but the new one had ended"
    );
}

#[test]
fn at_capacity_the_series_seen_longest_ago_go_first() {
    let mut series = Series::default();
    let t0 = Instant::now();
    let events = 3 * CAPACITY as u64;
    for key in 0..events {
        start(&mut series, key, t0 + Duration::from_millis(key));
        assert!(
            series.entries.len() <= CAPACITY,
            "{} series remembered",
            series.entries.len()
        );
    }
    let now = t0 + Duration::from_millis(events);
    assert!(
        series.seen_again(events - 1, now).is_some(),
        "the newest is kept"
    );
    assert!(series.seen_again(0, now).is_none(), "the oldest is gone");
}

#[test]
fn a_forgotten_series_starts_again() {
    let mut series = Series::default();
    let key = series.key(("Warning", "Failed", "widget-a"));
    let t0 = Instant::now();
    start(&mut series, key, t0);
    series.forget(key);
    assert_eq!(series.seen_again(key, t0), None);
}
