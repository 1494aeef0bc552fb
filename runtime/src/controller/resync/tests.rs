use ::std::collections::BTreeMap;
use ::std::time::Duration;

use ::futures::StreamExt as _;
use ::kube::runtime::reflector::{self, store::Writer};
use ::kube::runtime::watcher;
use ::tokio::time::{Instant, timeout_at};

use super::*;
use crate::test_kinds::{self, Widget};

const PERIOD: Duration = Duration::from_secs(60);

fn named(name: &str) -> Widget {
    let mut widget = test_kinds::widget();
    widget.metadata.name = Some(name.to_owned());
    widget
}

fn stored(writer: &mut Writer<Widget>, names: &[&str]) {
    for name in names {
        writer.apply_watcher_event(&watcher::Event::Apply(named(name)));
    }
}

/// When each object was triggered, from now until `until`.
async fn triggered_until(
    resyncs: &mut (impl ::futures::Stream<Item = ObjectRef<Widget>> + Unpin),
    until: Instant,
) -> BTreeMap<String, Vec<Instant>> {
    let mut triggered: BTreeMap<String, Vec<Instant>> = BTreeMap::new();
    while let Ok(Some(object)) = timeout_at(until, resyncs.next()).await {
        triggered
            .entry(object.name)
            .or_default()
            .push(Instant::now());
    }
    triggered
}

// Paused time: the ticks pass at once, at their exact instants.
#[tokio::test(start_paused = true)]
async fn every_cached_object_is_triggered_once_a_period_at_the_same_point_of_it() {
    let (store, mut writer) = reflector::store::<Widget>();
    let names: Vec<String> = (0..40).map(|i| format!("widget-{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    stored(&mut writer, &names);
    let start = Instant::now();
    let mut resyncs = Box::pin(resync(store, PERIOD));

    let first = triggered_until(&mut resyncs, start + PERIOD).await;
    assert_eq!(first.len(), names.len(), "{first:?}");
    assert!(first.values().all(|times| times.len() == 1), "{first:?}");
    // Spread over the period, not all at once.
    let mut ticks: Vec<Instant> = first.values().flatten().copied().collect();
    ticks.sort();
    ticks.dedup();
    assert!(ticks.len() > 10, "{ticks:?}");

    // One object deleted and one created during the first period.
    writer.apply_watcher_event(&watcher::Event::Delete(named("widget-0")));
    stored(&mut writer, &["created"]);
    let second = triggered_until(&mut resyncs, start + PERIOD * 2).await;
    assert!(!second.contains_key("widget-0"), "{second:?}");
    assert_eq!(second["created"].len(), 1);
    for name in &names[1..] {
        let [again] = second[*name][..] else {
            panic!("{name} triggered once again: {second:?}")
        };
        assert_eq!(again - first[*name][0], PERIOD, "{name}");
    }
}

#[test]
fn slots_are_spread_evenly() {
    let mut per_slot = vec![0_u32; usize::try_from(SLOTS).unwrap()];
    for i in 0..6_000 {
        let mut widget = named(&format!("widget-{i}"));
        widget.metadata.namespace = Some(format!("team-{}", i % 7));
        per_slot[usize::try_from(slot_of(&widget)).unwrap()] += 1;
    }
    // 100 a slot on average (60 slots).
    assert!(
        per_slot.iter().all(|count| (60..=140).contains(count)),
        "{per_slot:?}"
    );
}
