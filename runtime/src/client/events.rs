//! Kubernetes events about the objects the controllers reconcile, as `kubectl describe` shows
//! them.

use ::kube::Resource;
use ::kube::runtime::events::{Event, EventType, Recorder, Reporter};
use ::tracing::warn;

use crate::identity::field_manager;

/// Publishes events through one recorder for the whole manager, as the field manager's
/// controller and the Pod (`POD_NAME`) as its instance.
///
/// Events are informational: one that cannot be published is logged, and never fails a
/// reconcile.
#[derive(Clone)]
pub struct Events {
    recorder: Recorder,
}

impl Events {
    /// Events published through `client`, reported by the manager (see
    /// [`field_manager`]) and, in a Pod, by its name (`POD_NAME`).
    pub fn new(client: ::kube::Client) -> Self {
        let reporter = Reporter {
            controller: field_manager().to_owned(),
            instance: ::std::env::var("POD_NAME").ok(),
        };
        Self {
            recorder: Recorder::new(client, reporter),
        }
    }

    /// Publishes an event of type `Normal` about `obj`: something went as it should.
    pub async fn normal<K>(&self, obj: &K, reason: &str, action: &str, note: impl Into<String>)
    where
        K: Resource<DynamicType = ()>,
    {
        self.publish(obj, EventType::Normal, reason, action, note.into())
            .await;
    }

    /// Publishes an event of type `Warning` about `obj`: something needs a look.
    pub async fn warning<K>(&self, obj: &K, reason: &str, action: &str, note: impl Into<String>)
    where
        K: Resource<DynamicType = ()>,
    {
        self.publish(obj, EventType::Warning, reason, action, note.into())
            .await;
    }

    async fn publish<K>(&self, obj: &K, type_: EventType, reason: &str, action: &str, note: String)
    where
        K: Resource<DynamicType = ()>,
    {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note),
            action: action.to_owned(),
            secondary: None,
        };
        if let Err(error) = self.recorder.publish(&event, &obj.object_ref(&())).await {
            warn!(%error, reason, "cannot publish event");
        }
    }
}

#[cfg(test)]
mod tests;
