//! Which of a controller's due objects reconciles next: the changes users make before the
//! backlog.
//!
//! kube's `Controller` has a single line: its scheduler hands out due objects in the order
//! their timers expire, so an object someone edits right now waits behind the whole initial
//! list of a starting (or newly elected) controller and behind every resync that fell due
//! before it. Rather than replace that scheduler (its internals are not public), the driver
//! keeps the concurrency limit itself: kube's controller runs without one, so every due object
//! reaches the driver at once, and each reconcile first takes one of `concurrency` turns here.
//! While all turns are taken, the objects wait in one of two lines:
//!
//! - **changed**: objects whose own watch reported them added or modified after its initial
//!   list (a user's edit, a new object, a deletion that has begun; also the status the
//!   controller wrote itself, since an event does not say who made the change: that
//!   reconcile finds nothing to write);
//! - **backlog**: the rest: the initial list and the re-lists after a watch expired, requeues
//!   and the periodic resync, retries after errors, and changes of the objects a controller
//!   owns or references (kube maps those to their owner without saying why).
//!
//! A freed turn goes to the oldest changed object, else to the oldest of the backlog. An object
//! marked changed while it waits in the backlog moves to the other line. Nothing starves for
//! long: a change is reconciled once, after which the object is back to the backlog. No turn
//! is handed out before the replica leads: a warm standby's objects all wait here, and once
//! it is elected the changes made since its watch listed go first.
//!
//! In a controller, what waits is the object's reference alone, not its reconcile: a reconcile
//! that finds no turn ends at once ([`Queue::turn_now`]), and when a turn frees up for the
//! object the turn is set aside for it and the object goes out on [`Queue::triggers`], which
//! the controller reconciles again. A waiting reconcile would be a task kube's controller polls
//! each time it wakes, so a backlog of N objects would cost work in proportion to N at every
//! reconcile, and the memory of N tasks. (A reconcile called outside a controller, as
//! [`Driver::reconcile`](super::Driver::reconcile) is in tests, waits for its turn instead:
//! [`Queue::turn`].)
//!
//! kube still never runs two reconciles of one object at once, so an object waits here at most
//! once; the driver reconciles the cache's newest copy of it when its turn comes.
//!
//! The queue keeps each object as one [`Key`], its name and namespace, shared by the sets it is
//! in: while a backlog of thousands waits, the references are most of the queue's memory, and
//! a reference as kube makes it from an object also carries its resource version and UID.

use ::std::collections::{BTreeMap, HashMap, HashSet};
use ::std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ::futures::channel::mpsc;
use ::kube::Resource;
use ::kube::runtime::reflector::ObjectRef;
use ::tokio::sync::oneshot;

/// An object as the queue keeps it: the reference's name and namespace alone (what kube
/// compares), allocated once for the sets and the line it is in.
type Key<K> = Arc<ObjectRef<K>>;

fn key<K: Resource<DynamicType = ()>>(object: &ObjectRef<K>) -> Key<K> {
    let name = ObjectRef::new(&object.name);
    Arc::new(match &object.namespace {
        Some(namespace) => name.within(namespace),
        None => name,
    })
}

/// The line an object waits in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Line {
    /// Changed after the initial list: goes first.
    Changed,
    /// Everything else.
    Backlog,
}

/// The turns of one controller's reconciles, and the lines that wait for them.
pub(crate) struct Queue<K: Resource<DynamicType = ()>> {
    state: Arc<Mutex<State<K>>>,
}

impl<K: Resource<DynamicType = ()>> Clone for Queue<K> {
    fn clone(&self) -> Self {
        Self {
            state: Arc::clone(&self.state),
        }
    }
}

struct State<K: Resource<DynamicType = ()>> {
    /// Whether turns are handed out: not before the replica leads.
    open: bool,
    /// Turns nobody holds and none is set aside for.
    free: usize,
    /// Objects changed since their last reconcile began.
    changed: HashSet<Key<K>>,
    /// The waiting objects, in the order they get their turns.
    waiting: BTreeMap<(Line, u64), Waiter<K>>,
    /// Where each waiting object is in `waiting`.
    places: HashMap<Key<K>, (Line, u64)>,
    /// The number the next waiting object draws.
    next: u64,
    /// Objects a turn is set aside for, sent on `triggers` for the controller to reconcile.
    reserved: HashSet<Key<K>>,
    /// Where the objects given a turn go, for the controller to reconcile them again.
    triggers: mpsc::UnboundedSender<ObjectRef<K>>,
    /// The other end of `triggers`, until the controller takes it.
    triggered: Option<mpsc::UnboundedReceiver<ObjectRef<K>>>,
}

/// A waiting object, and how it learns that its turn has come.
struct Waiter<K: Resource<DynamicType = ()>> {
    object: Key<K>,
    /// The reconcile that waits for the turn ([`Queue::turn`]); `None` for an object whose
    /// reconcile ended ([`Queue::turn_now`]): its turn is set aside and it is triggered.
    turn: Option<oneshot::Sender<Turn<K>>>,
}

/// One reconcile's right to run; the next waiting object gets it when this is dropped.
pub(crate) struct Turn<K: Resource<DynamicType = ()>> {
    state: Arc<Mutex<State<K>>>,
    /// Whether dropping this frees a turn: not for one that no reconcile received.
    held: bool,
}

impl<K: Resource<DynamicType = ()>> Turn<K> {
    fn held(state: &Arc<Mutex<State<K>>>) -> Self {
        Self {
            state: Arc::clone(state),
            held: true,
        }
    }
}

impl<K: Resource<DynamicType = ()>> Drop for Turn<K> {
    fn drop(&mut self) {
        if self.held {
            let mut state = lock(&self.state);
            state.free += 1;
            state.hand_out(&self.state);
        }
    }
}

impl<K: Resource<DynamicType = ()>> Queue<K> {
    /// Turns for `concurrency` reconciles at once (at least 1), handed out once
    /// [`Queue::open`] is called.
    pub(crate) fn new(concurrency: usize) -> Self {
        let (triggers, triggered) = mpsc::unbounded();
        Self {
            state: Arc::new(Mutex::new(State {
                open: false,
                free: concurrency.max(1),
                changed: HashSet::new(),
                waiting: BTreeMap::new(),
                places: HashMap::new(),
                next: 0,
                reserved: HashSet::new(),
                triggers,
                triggered: Some(triggered),
            })),
        }
    }

    /// The objects whose turn has come after [`Queue::turn_now`] found none, for the
    /// controller to reconcile again: once (`None` after the first call).
    pub(crate) fn triggers(&self) -> Option<mpsc::UnboundedReceiver<ObjectRef<K>>> {
        lock(&self.state).triggered.take()
    }

    /// Hands out turns from now on: the replica leads. A warm standby's objects wait here
    /// until then, so that the first turns go to the changes made meanwhile.
    pub(crate) fn open(&self) {
        let mut state = lock(&self.state);
        if !state.open {
            state.open = true;
            state.hand_out(&self.state);
        }
    }

    /// Notes that the watch saw `object` added or modified after its initial list: its next
    /// reconcile, or its wait for one, goes ahead of the backlog.
    pub(crate) fn changed(&self, object: &ObjectRef<K>) {
        let mut state = lock(&self.state);
        // A waiting object's reconcile reads the change from the cache when its turn comes.
        if let Some(place) = state.places.get_mut(object) {
            if let (Line::Backlog, number) = *place {
                *place = (Line::Changed, number);
                if let Some(waiter) = state.waiting.remove(&(Line::Backlog, number)) {
                    state.waiting.insert((Line::Changed, number), waiter);
                }
            }
            return;
        }
        if !state.changed.contains(object) {
            state.changed.insert(key(object));
        }
    }

    /// Forgets `object`, which the watch saw deleted: its change, its wait, and a turn set
    /// aside for it, which goes to the next in line.
    pub(crate) fn deleted(&self, object: &ObjectRef<K>) {
        let mut state = lock(&self.state);
        state.changed.remove(object);
        // Not a waiting reconcile (outside a controller): it finds the object gone when its
        // turn comes, and frees the turn.
        if let Some(place) = state.places.get(object).copied()
            && state
                .waiting
                .get(&place)
                .is_some_and(|waiter| waiter.turn.is_none())
        {
            state.waiting.remove(&place);
            state.places.remove(object);
        }
        if state.reserved.remove(object) {
            state.free += 1;
            state.hand_out(&self.state);
        }
    }

    /// The turn of a reconcile of `object` that the controller starts now, if it may run:
    /// the turn set aside for it, or a free one (then nothing waits). Otherwise `None`: the
    /// object waits in the line its changes put it in (if it does not already), and goes out
    /// on [`Queue::triggers`] when a turn is set aside for it.
    pub(crate) fn turn_now(&self, object: &ObjectRef<K>) -> Option<Turn<K>> {
        let mut state = lock(&self.state);
        let reserved = state.reserved.remove(object);
        if reserved || (state.open && state.free > 0) {
            if !reserved {
                state.free -= 1;
            }
            state.changed.remove(object);
            return Some(Turn::held(&self.state));
        }
        if !state.places.contains_key(object) {
            state.wait(object, None);
        }
        None
    }

    /// Waits for a turn to reconcile `object`, in the line its changes put it in.
    pub(crate) async fn turn(&self, object: &ObjectRef<K>) -> Turn<K> {
        let receiver = {
            let mut state = lock(&self.state);
            let (sender, receiver) = oneshot::channel();
            state.wait(object, Some(sender));
            state.hand_out(&self.state);
            receiver
        };
        // The sender is dropped without sending only with the queue, which this holds.
        receiver.await.expect("the queue outlives its waiters")
    }
}

impl<K: Resource<DynamicType = ()>> State<K> {
    /// Puts `object` at the end of its line: the changed one if it changed since its last
    /// reconcile began, else the backlog.
    fn wait(&mut self, object: &ObjectRef<K>, turn: Option<oneshot::Sender<Turn<K>>>) {
        let (line, object) = match self.changed.take(object) {
            Some(changed) => (Line::Changed, changed),
            None => (Line::Backlog, key(object)),
        };
        let place = (line, self.next);
        self.next += 1;
        self.places.insert(Arc::clone(&object), place);
        self.waiting.insert(place, Waiter { object, turn });
    }

    /// Gives the free turns to the first in line: sends it to a waiting reconcile, or sets it
    /// aside for an object and triggers its reconcile. A reconcile gone (dropped while it
    /// waited, at a shutdown) is skipped; a turn it received and never used comes back when
    /// dropped.
    fn hand_out(&mut self, shared: &Arc<Mutex<State<K>>>) {
        while self.open && self.free > 0 {
            let Some((_, waiter)) = self.waiting.pop_first() else {
                return;
            };
            self.places.remove(&waiter.object);
            let Some(sender) = waiter.turn else {
                // Fails only once the controller is gone, which reconciles nothing more.
                if self
                    .triggers
                    .unbounded_send((*waiter.object).clone())
                    .is_ok()
                {
                    self.reserved.insert(waiter.object);
                    self.free -= 1;
                }
                continue;
            };
            match sender.send(Turn::held(shared)) {
                Ok(()) => self.free -= 1,
                // Dropped here, under the lock: it must not free a turn.
                Err(mut unused) => unused.held = false,
            }
        }
    }
}

fn lock<K: Resource<DynamicType = ()>>(state: &Mutex<State<K>>) -> MutexGuard<'_, State<K>> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
