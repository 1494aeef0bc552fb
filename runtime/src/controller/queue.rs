//! Which of a controller's due objects reconciles next: the changes users make before the
//! backlog.
//!
//! kube's `Controller` has a single line: its scheduler hands out due objects in the order
//! their timers expire, so an object someone edits right now waits behind the whole initial
//! list of a starting (or newly elected) controller and behind every resync that fell due
//! before it. Rather than replace that scheduler (its internals are not public), the driver
//! keeps the concurrency limit itself: kube's controller runs without one, so every due object
//! reaches the driver at once, and each reconcile first takes one of `concurrency` turns here.
//! While all turns are taken, reconciles wait in one of two lines:
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
//! is handed out before the replica leads: a warm standby's reconciles all wait here, and once
//! it is elected the changes made since its watch listed go first.
//!
//! kube still never runs two reconciles of one object at once, so an object waits here at most
//! once; the driver reconciles the cache's newest copy of it when its turn comes.

use ::std::collections::{BTreeMap, HashMap, HashSet};
use ::std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ::kube::Resource;
use ::kube::runtime::reflector::ObjectRef;
use ::tokio::sync::oneshot;

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
    /// Turns nobody holds.
    free: usize,
    /// Objects changed since their last reconcile began.
    changed: HashSet<ObjectRef<K>>,
    /// The waiting reconciles, in the order they get their turns.
    waiting: BTreeMap<(Line, u64), Waiter<K>>,
    /// Where each waiting object is in `waiting`, by the number it drew.
    places: HashMap<ObjectRef<K>, u64>,
    /// The number the next waiting reconcile draws.
    next: u64,
}

struct Waiter<K: Resource<DynamicType = ()>> {
    object: ObjectRef<K>,
    turn: oneshot::Sender<Turn<K>>,
}

/// One reconcile's right to run; the next waiting reconcile gets it when this is dropped.
pub(crate) struct Turn<K: Resource<DynamicType = ()>> {
    state: Arc<Mutex<State<K>>>,
    /// Whether dropping this frees a turn: not for one that no reconcile received.
    held: bool,
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
        Self {
            state: Arc::new(Mutex::new(State {
                open: false,
                free: concurrency.max(1),
                changed: HashSet::new(),
                waiting: BTreeMap::new(),
                places: HashMap::new(),
                next: 0,
            })),
        }
    }

    /// Hands out turns from now on: the replica leads. A warm standby's reconciles wait here
    /// until then, so that the first turns go to the changes made meanwhile.
    pub(crate) fn open(&self) {
        let mut state = lock(&self.state);
        if !state.open {
            state.open = true;
            state.hand_out(&self.state);
        }
    }

    /// Notes that the watch saw `object` added or modified after its initial list: its next
    /// reconcile, or the one waiting already, goes ahead of the backlog.
    pub(crate) fn changed(&self, object: ObjectRef<K>) {
        let mut state = lock(&self.state);
        // A waiting reconcile reads the change from the cache when its turn comes.
        if let Some(&number) = state.places.get(&object) {
            if let Some(waiter) = state.waiting.remove(&(Line::Backlog, number)) {
                state.waiting.insert((Line::Changed, number), waiter);
            }
            return;
        }
        state.changed.insert(object);
    }

    /// Forgets a change of `object`, which the watch saw deleted: nothing reconciles it.
    pub(crate) fn deleted(&self, object: &ObjectRef<K>) {
        lock(&self.state).changed.remove(object);
    }

    /// Waits for a turn to reconcile `object`, in the line its changes put it in.
    pub(crate) async fn turn(&self, object: &ObjectRef<K>) -> Turn<K> {
        let receiver = {
            let mut state = lock(&self.state);
            let line = if state.changed.remove(object) {
                Line::Changed
            } else {
                Line::Backlog
            };
            let (sender, receiver) = oneshot::channel();
            let number = state.next;
            state.next += 1;
            let waiter = Waiter {
                object: object.clone(),
                turn: sender,
            };
            state.waiting.insert((line, number), waiter);
            state.places.insert(object.clone(), number);
            state.hand_out(&self.state);
            receiver
        };
        // The sender is dropped without sending only with the queue, which this holds.
        receiver.await.expect("the queue outlives its waiters")
    }
}

impl<K: Resource<DynamicType = ()>> State<K> {
    /// Gives the free turns to the first waiters. A waiter gone (its reconcile dropped, at a
    /// shutdown) is skipped; a turn it received and never used comes back when dropped.
    fn hand_out(&mut self, shared: &Arc<Mutex<State<K>>>) {
        while self.open && self.free > 0 {
            let Some((_, waiter)) = self.waiting.pop_first() else {
                return;
            };
            self.places.remove(&waiter.object);
            let turn = Turn {
                state: Arc::clone(shared),
                held: true,
            };
            match waiter.turn.send(turn) {
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
