use ::std::time::Duration;

use ::futures::FutureExt as _;
use ::k8s_openapi::api::core::v1::ConfigMap;

use super::*;

impl<K: Resource<DynamicType = ()>> Queue<K> {
    /// How many reconciles wait in `line`.
    fn waiting(&self, line: Line) -> usize {
        let state = lock(&self.state);
        state.waiting.keys().filter(|(l, _)| *l == line).count()
    }
}

fn object(name: &str) -> ObjectRef<ConfigMap> {
    ObjectRef::new(name).within("team-a")
}

/// Starts a reconcile of `name` that waits for its turn, and reports its name once it has it.
fn start(
    queue: &Queue<ConfigMap>,
    name: &'static str,
    started: &::tokio::sync::mpsc::UnboundedSender<&'static str>,
) -> ::tokio::task::JoinHandle<Turn<ConfigMap>> {
    let queue = queue.clone();
    let started = started.clone();
    ::tokio::spawn(async move {
        let turn = queue.turn(&object(name)).await;
        started.send(name).unwrap();
        turn
    })
}

/// Lets the spawned reconciles reach the queue.
async fn settle() {
    ::tokio::time::sleep(Duration::from_millis(10)).await;
}

#[::tokio::test]
async fn a_change_overtakes_the_backlog() {
    let queue = Queue::open_with(1);
    let (started, mut order) = ::tokio::sync::mpsc::unbounded_channel();
    // The initial list: three objects, one turn. `a` takes it, the others wait.
    let first = start(&queue, "a", &started);
    settle().await;
    let waiting: Vec<_> = ["b", "c"]
        .into_iter()
        .map(|name| start(&queue, name, &started))
        .collect();
    settle().await;
    assert_eq!(queue.waiting(Line::Backlog), 2);

    // A user edits `d`: its watch event comes after the list, so it goes first.
    queue.changed(&object("d"));
    let changed = start(&queue, "d", &started);
    settle().await;
    assert_eq!(queue.waiting(Line::Changed), 1);

    drop(first.await.unwrap());
    let mut turns = vec![changed];
    turns.extend(waiting);
    for turn in turns {
        drop(turn.await.unwrap());
    }
    let mut seen = Vec::new();
    while let Some(name) = order.recv().now_or_never().flatten() {
        seen.push(name);
    }
    assert_eq!(seen, ["a", "d", "b", "c"]);
}

#[::tokio::test]
async fn an_object_changed_while_it_waits_moves_ahead() {
    let queue = Queue::open_with(1);
    let (started, mut order) = ::tokio::sync::mpsc::unbounded_channel();
    let first = start(&queue, "a", &started);
    settle().await;
    let b = start(&queue, "b", &started);
    settle().await;
    let c = start(&queue, "c", &started);
    settle().await;

    queue.changed(&object("c"));
    assert_eq!(queue.waiting(Line::Changed), 1);
    assert_eq!(queue.waiting(Line::Backlog), 1);

    drop(first.await.unwrap());
    drop(c.await.unwrap());
    drop(b.await.unwrap());
    let seen: Vec<_> = [order.recv().await, order.recv().await, order.recv().await]
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(seen, ["a", "c", "b"]);
    // The change was read by the reconcile that waited: the next one is backlog again.
    let next = queue.turn(&object("c")).await;
    drop(next);
    assert_eq!(queue.waiting(Line::Changed), 0);
}

#[::tokio::test]
async fn turns_are_limited_and_come_back_from_abandoned_reconciles() {
    let queue = Queue::open_with(2);
    let a = queue.turn(&object("a")).await;
    let _b = queue.turn(&object("b")).await;
    // No third turn while two are held.
    assert!(queue.turn(&object("c")).now_or_never().is_none());
    // A reconcile dropped while it waits (at a shutdown) takes no turn away.
    let d = object("d");
    let mut abandoned = Box::pin(queue.turn(&d));
    assert!((&mut abandoned).now_or_never().is_none());
    drop(abandoned);
    drop(a);
    let c = ::tokio::time::timeout(Duration::from_secs(1), queue.turn(&object("c")))
        .await
        .expect("the freed turn is handed out");
    drop(c);
}

#[::tokio::test]
async fn a_deleted_object_loses_its_change() {
    let queue = Queue::open_with(1);
    queue.changed(&object("a"));
    queue.deleted(&object("a"));
    let held = queue.turn(&object("x")).await;
    let (started, _order) = ::tokio::sync::mpsc::unbounded_channel();
    let waiting = start(&queue, "a", &started);
    settle().await;
    assert_eq!(queue.waiting(Line::Backlog), 1);
    drop(held);
    drop(waiting.await.unwrap());
}

#[::tokio::test]
async fn no_turn_before_the_line_opens_and_then_changes_first() {
    let queue = Queue::new(1);
    let (started, mut order) = ::tokio::sync::mpsc::unbounded_channel();
    // A standby's reconciles: the backlog, then a change.
    let backlog = start(&queue, "a", &started);
    settle().await;
    queue.changed(&object("b"));
    let changed = start(&queue, "b", &started);
    settle().await;
    assert_eq!(queue.waiting(Line::Backlog), 1);
    assert_eq!(queue.waiting(Line::Changed), 1);

    // Elected: the change first.
    queue.open();
    drop(changed.await.unwrap());
    drop(backlog.await.unwrap());
    assert_eq!(order.recv().await, Some("b"));
    assert_eq!(order.recv().await, Some("a"));
}

/// The objects the queue has triggered so far, in order.
fn triggered(triggers: &mut mpsc::UnboundedReceiver<ObjectRef<ConfigMap>>) -> Vec<String> {
    ::std::iter::from_fn(|| triggers.try_recv().ok())
        .map(|object| object.name)
        .collect()
}

#[test]
fn an_object_without_a_turn_waits_without_its_reconcile_and_is_triggered_in_order() {
    let queue = Queue::open_with(1);
    let mut triggers = queue.triggers().expect("the triggers, once");
    assert!(queue.triggers().is_none());
    let a = queue.turn_now(&object("a")).expect("a free turn");
    // The initial list goes on: no turn, so the reconciles end and the objects wait.
    assert!(queue.turn_now(&object("b")).is_none());
    assert!(queue.turn_now(&object("c")).is_none());
    // A user edits `d`.
    queue.changed(&object("d"));
    assert!(queue.turn_now(&object("d")).is_none());
    // kube's controller starts `b` again (a requeue, say): it still waits, once.
    assert!(queue.turn_now(&object("b")).is_none());
    assert_eq!(queue.waiting(Line::Backlog), 2);
    assert_eq!(queue.waiting(Line::Changed), 1);
    assert_eq!(triggered(&mut triggers), Vec::<String>::new());

    drop(a);
    assert_eq!(triggered(&mut triggers), ["d"]);
    // The turn is set aside for `d`: `b`, started by something else meanwhile, waits on.
    assert!(queue.turn_now(&object("b")).is_none());
    let d = queue.turn_now(&object("d")).expect("the turn set aside");
    assert_eq!(triggered(&mut triggers), Vec::<String>::new());
    drop(d);
    assert_eq!(triggered(&mut triggers), ["b"]);
    drop(queue.turn_now(&object("b")).expect("the turn set aside"));
    assert_eq!(triggered(&mut triggers), ["c"]);
    drop(queue.turn_now(&object("c")).expect("the turn set aside"));
    assert_eq!(
        queue.waiting(Line::Backlog) + queue.waiting(Line::Changed),
        0
    );
    // Nothing waits: the next reconcile takes the free turn at once.
    assert!(queue.turn_now(&object("e")).is_some());
}

#[test]
fn a_deleted_object_leaves_its_line_and_its_turn_goes_to_the_next() {
    let queue = Queue::open_with(1);
    let mut triggers = queue.triggers().expect("the triggers");
    let a = queue.turn_now(&object("a")).expect("a free turn");
    for name in ["b", "c", "d"] {
        assert!(queue.turn_now(&object(name)).is_none());
    }
    // Deleted while it waits: it leaves the line.
    queue.deleted(&object("c"));
    assert_eq!(queue.waiting(Line::Backlog), 2);
    drop(a);
    assert_eq!(triggered(&mut triggers), ["b"]);
    // Deleted after its turn was set aside: the turn goes to the next in line.
    queue.deleted(&object("b"));
    assert_eq!(triggered(&mut triggers), ["d"]);
    drop(queue.turn_now(&object("d")).expect("the turn set aside"));
    assert_eq!(triggered(&mut triggers), Vec::<String>::new());
    // The one turn is free again.
    assert!(queue.turn_now(&object("e")).is_some());
}

#[test]
fn a_standby_triggers_nothing_and_once_elected_the_changes_first() {
    let queue = Queue::new(1);
    let mut triggers = queue.triggers().expect("the triggers");
    assert!(queue.turn_now(&object("a")).is_none());
    queue.changed(&object("b"));
    assert!(queue.turn_now(&object("b")).is_none());
    assert_eq!(triggered(&mut triggers), Vec::<String>::new());

    queue.open();
    assert_eq!(triggered(&mut triggers), ["b"]);
    drop(queue.turn_now(&object("b")).expect("the turn set aside"));
    assert_eq!(triggered(&mut triggers), ["a"]);
}

impl Queue<ConfigMap> {
    /// An open queue: a leader's.
    fn open_with(concurrency: usize) -> Self {
        let queue = Self::new(concurrency);
        queue.open();
        queue
    }
}

/// A reference as kube makes it from an object: with its resource version and UID.
fn from_an_object(name: &str) -> ObjectRef<ConfigMap> {
    let mut config_map = ConfigMap::default();
    config_map.metadata.name = Some(name.to_owned());
    config_map.metadata.namespace = Some("team-a".to_owned());
    config_map.metadata.resource_version = Some("12345".to_owned());
    config_map.metadata.uid = Some("0b7a52c4-4b59-4f4e-9d4b-6f0c7e1a2b3c".to_owned());
    ObjectRef::from_obj(&config_map)
}

/// A waiting object is kept once, by name and namespace: its place and its line share one
/// reference, without the resource version and UID kube's carried, and the trigger names it
/// in its namespace.
#[test]
fn a_waiting_object_is_kept_once_by_name_and_namespace() {
    let queue = Queue::open_with(1);
    let mut triggers = queue.triggers().expect("the triggers");
    let held = queue.turn_now(&object("x")).expect("the free turn");
    queue.changed(&from_an_object("a"));
    assert!(queue.turn_now(&from_an_object("a")).is_none());
    {
        let state = lock(&queue.state);
        let (place, waiter) = state.waiting.first_key_value().expect("a waits");
        let (kept, kept_place) = state.places.get_key_value(&object("a")).expect("its place");
        assert_eq!(kept_place, place);
        assert!(Arc::ptr_eq(kept, &waiter.object), "two copies of `a`");
        assert_eq!(kept.namespace.as_deref(), Some("team-a"));
        assert_eq!(kept.extra.resource_version, None);
        assert_eq!(kept.extra.uid, None);
        assert!(state.changed.is_empty(), "`a`'s change is its line now");
    }
    drop(held);
    let sent = triggers.try_recv().expect("`a` is triggered");
    assert_eq!(sent, from_an_object("a"));
    assert_eq!(sent.namespace.as_deref(), Some("team-a"));
}
