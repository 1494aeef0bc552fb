//! Kubernetes events about the objects the controllers reconcile, as `kubectl describe` shows
//! them.

use ::kube::Resource;
use ::kube::runtime::events::{Event, EventType, Recorder, Reporter};
use ::tracing::warn;

use crate::context::field_manager;

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
mod tests {
    use ::http::StatusCode;

    use crate::test_kinds::{self, Gadget};
    use crate::testing;

    #[tokio::test]
    async fn events_name_the_object_and_the_reporting_controller() {
        let (ctx, mut server) = testing::context();
        let widget = test_kinds::widget();

        server
            .run(
                ctx.events.warning(&widget, "Stuck", "Check", "help"),
                async |server| {
                    let event = server.expect_event(&widget, "Warning", "Stuck").await;
                    assert_eq!(event["action"], "Check");
                    assert_eq!(event["note"], "help");
                    assert_eq!(event["regarding"]["apiVersion"], "example.com/v1");
                },
            )
            .await;
    }

    #[tokio::test]
    async fn events_of_cluster_scoped_objects_go_to_the_default_namespace() {
        let (ctx, mut server) = testing::context();
        let gadget = test_kinds::gadget();

        server
            .run(
                ctx.events.normal(&gadget, "Made", "Make", "done"),
                async |server| {
                    let event = server.expect_event(&gadget, "Normal", "Made").await;
                    assert_eq!(event["regarding"]["kind"], "Gadget");
                },
            )
            .await;
    }

    #[tokio::test]
    async fn an_event_that_cannot_be_published_fails_nothing() {
        let (ctx, mut server) = testing::context();
        let gadget: Gadget = test_kinds::gadget();

        // `normal` returns (), whatever the API server answers.
        server
            .run(
                ctx.events.normal(&gadget, "Made", "Make", "done"),
                async |server| {
                    let path = testing::events_path(None);
                    server
                        .expect(::http::Method::POST, &path)
                        .await
                        .fail(StatusCode::FORBIDDEN);
                },
            )
            .await;
    }
}
