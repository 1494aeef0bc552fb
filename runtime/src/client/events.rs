//! Kubernetes events about the objects the controllers reconcile, as `kubectl describe` shows
//! them.

use ::std::sync::{Arc, Mutex, PoisonError};

use ::k8s_openapi::api::core::v1::ObjectReference;
use ::k8s_openapi::api::events::v1::{Event, EventSeries};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use ::k8s_openapi::jiff::Timestamp;
use ::kube::Resource;
use ::kube::api::{Api, Patch, PatchParams, PostParams};
use ::tokio::time::Instant;
use ::tracing::warn;

use crate::identity::field_manager;

mod series;

use series::Series;

/// Publishes events through one recorder for the whole manager, as the field manager's
/// controller and the Pod (`POD_NAME`) as its instance.
///
/// The same event about the same object again within minutes adds to the count of the first
/// (an event series) rather than making another Event object. Two events are the same when
/// their type, reason, action and note are, so that an event with news is never folded into
/// an older one's text. What the recorder remembers for that is bounded (see the `series`
/// module): a hash and the Event's name per recent event, at most 4,096 events.
///
/// Events are informational: one that cannot be published is logged, and never fails a
/// reconcile.
#[derive(Clone)]
pub struct Events {
    client: ::kube::Client,
    /// The `reportingInstance` of every event.
    instance: String,
    series: Arc<Mutex<Series>>,
}

/// An event to publish, before it is an Event object.
struct Occurrence<'a> {
    type_: &'static str,
    reason: &'a str,
    action: &'a str,
    note: String,
    regarding: ObjectReference,
}

impl Events {
    /// Events published through `client`, reported by the manager (see
    /// [`field_manager`]) and, in a Pod, by its name (`POD_NAME`).
    pub fn new(client: ::kube::Client) -> Self {
        let instance = ::std::env::var("POD_NAME").unwrap_or_else(|_| field_manager().to_owned());
        Self {
            client,
            instance,
            series: Arc::default(),
        }
    }

    /// Publishes an event of type `Normal` about `obj`: something went as it should.
    pub async fn normal<K>(&self, obj: &K, reason: &str, action: &str, note: impl Into<String>)
    where
        K: Resource<DynamicType = ()>,
    {
        self.publish(obj, "Normal", reason, action, note.into())
            .await;
    }

    /// Publishes an event of type `Warning` about `obj`: something needs a look.
    pub async fn warning<K>(&self, obj: &K, reason: &str, action: &str, note: impl Into<String>)
    where
        K: Resource<DynamicType = ()>,
    {
        self.publish(obj, "Warning", reason, action, note.into())
            .await;
    }

    async fn publish<K>(
        &self,
        obj: &K,
        type_: &'static str,
        reason: &str,
        action: &str,
        note: String,
    ) where
        K: Resource<DynamicType = ()>,
    {
        let occurrence = Occurrence {
            type_,
            reason,
            action,
            note,
            regarding: obj.object_ref(&()),
        };
        if let Err(error) = self.record(&occurrence).await {
            warn!(%error, reason, "cannot publish event");
        }
    }

    /// Adds `occurrence` to its open series, or publishes it as a new Event object.
    async fn record(&self, occurrence: &Occurrence<'_>) -> Result<(), ::kube::Error> {
        let regarding = &occurrence.regarding;
        // The object is named by its identity, not its resourceVersion: the same event about
        // a changed object is still the same event.
        let identity = (
            occurrence.type_,
            occurrence.reason,
            occurrence.action,
            &occurrence.note,
            (&regarding.api_version, &regarding.kind),
            (&regarding.namespace, &regarding.name, &regarding.uid),
        );
        let key = self.series().key(identity);
        let now = Instant::now();
        let open = self.series().seen_again(key, now);
        if let Some(series) = open {
            match self
                .count(&series.name, &series.namespace, series.count)
                .await
            {
                Err(::kube::Error::Api(status)) if status.code == 404 => {
                    // Its Event object expired (an hour, by default): a new one starts.
                    self.series().forget(key);
                }
                counted => return counted,
            }
        }
        let (name, namespace) = self.create(occurrence).await?;
        self.series().published(key, name, namespace, now);
        Ok(())
    }

    /// Publishes `occurrence` as a new Event object; returns its name and namespace.
    async fn create(&self, occurrence: &Occurrence<'_>) -> Result<(String, String), ::kube::Error> {
        let now = Timestamp::now();
        let regarding = &occurrence.regarding;
        // Events about cluster-scoped objects go to `default`, as kubectl looks for them.
        let namespace = regarding
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_owned());
        let about = regarding.name.as_deref().unwrap_or(field_manager());
        let name = format!("{about}.{:x}", now.as_nanosecond());
        let event = Event {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace.clone()),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(now)),
            type_: Some(occurrence.type_.to_owned()),
            reason: Some(occurrence.reason.to_owned()),
            action: Some(occurrence.action.to_owned()),
            note: Some(occurrence.note.clone()),
            regarding: Some(regarding.clone()),
            reporting_controller: Some(field_manager().to_owned()),
            reporting_instance: Some(self.instance.clone()),
            ..Event::default()
        };
        Api::<Event>::namespaced(self.client.clone(), &namespace)
            .create(&PostParams::default(), &event)
            .await?;
        Ok((name, namespace))
    }

    /// Sets the series of the Event object `name` to `count` occurrences, the last one now.
    async fn count(&self, name: &str, namespace: &str, count: i32) -> Result<(), ::kube::Error> {
        let series = EventSeries {
            count,
            last_observed_time: MicroTime(Timestamp::now()),
        };
        let patch = ::serde_json::json!({ "series": series });
        Api::<Event>::namespaced(self.client.clone(), namespace)
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map(drop)
    }

    fn series(&self) -> ::std::sync::MutexGuard<'_, Series> {
        // The series are a cache: one left half-updated by a panic is still usable.
        self.series.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests;
