//! The objects a controller makes for a custom object: named after it, labelled with
//! Kubernetes' recommended labels, owned by it, and written with server-side apply under one
//! field manager.

use ::std::collections::BTreeMap;
use ::std::fmt::Debug;

use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use ::kube::api::{DeleteParams, Patch, PatchParams};
use ::kube::core::NamespaceResourceScope;
use ::kube::runtime::reflector::{ObjectRef, Store};
use ::kube::runtime::watcher;
use ::kube::{Resource, ResourceExt as _};

use crate::cache::{cached, fingerprinted, is_up_to_date};
use crate::context::{ApiObject, field_manager};
use crate::{Context, Error};

/// What the pods run, e.g. `mysqlcluster`.
pub const NAME_LABEL: &str = "app.kubernetes.io/name";
/// Which custom object they run for: its name.
pub const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
/// Who manages them: [`field_manager`].
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// Their role in the application, e.g. `database`.
pub const COMPONENT_LABEL: &str = "app.kubernetes.io/component";

/// Kubernetes' recommended labels of the objects made for one custom object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppLabels {
    app: String,
    instance: String,
    component: String,
}

impl AppLabels {
    /// The labels of what runs `app` in the role `component` for `owner`.
    pub fn new(app: &str, component: &str, owner: &impl Resource) -> Self {
        Self {
            app: app.to_owned(),
            instance: owner.name_any(),
            component: component.to_owned(),
        }
    }

    /// The labels that select the pods: the app and the instance. A workload cannot change its
    /// selector, so these never change.
    pub fn selector(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (NAME_LABEL.to_owned(), self.app.clone()),
            (INSTANCE_LABEL.to_owned(), self.instance.clone()),
        ])
    }

    /// [`AppLabels::selector`] as a workload's label selector.
    pub fn label_selector(&self) -> LabelSelector {
        LabelSelector {
            match_labels: Some(self.selector()),
            ..LabelSelector::default()
        }
    }

    /// [`AppLabels::selector`] in label selector syntax, for a status's `selector` (which the
    /// scale subresource reports).
    pub fn selector_string(&self) -> String {
        self.selector()
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Every label: the selector's, the manager and the component.
    pub fn all(&self) -> BTreeMap<String, String> {
        let mut labels = self.selector();
        labels.insert(MANAGED_BY_LABEL.to_owned(), field_manager().to_owned());
        labels.insert(COMPONENT_LABEL.to_owned(), self.component.clone());
        labels
    }
}

/// A watch of only the objects this manager made for `app`, e.g. for `Controller::owns`.
pub fn made_for(app: &str) -> watcher::Config {
    let manager = field_manager();
    watcher::Config::default().labels(&format!("{MANAGED_BY_LABEL}={manager},{NAME_LABEL}={app}"))
}

/// The metadata of an object made for `owner`: named after it, in its namespace, with
/// `labels`, and owned by it through a controller owner reference, so that Kubernetes' garbage
/// collector deletes it with its owner.
pub fn owned_by<K>(owner: &K, labels: BTreeMap<String, String>) -> ObjectMeta
where
    K: Resource<DynamicType = ()>,
{
    ObjectMeta {
        name: Some(owner.name_any()),
        namespace: owner.namespace(),
        labels: Some(labels),
        owner_references: owner.controller_owner_ref(&()).map(|owner| vec![owner]),
        ..ObjectMeta::default()
    }
}

/// What [`Context::apply_cached`] found and did.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied<C> {
    /// The object as stored now.
    pub object: C,
    /// The object as it was before, if it existed.
    pub before: Option<C>,
    /// Whether it was applied (`false`: it was up to date, and nothing was sent).
    pub written: bool,
}

impl<C: Clone> Applied<C> {
    pub(crate) fn unchanged(object: C) -> Self {
        Self {
            before: Some(object.clone()),
            object,
            written: false,
        }
    }
}

impl Context {
    /// Applies `object` with server-side apply under the manager's field manager, creating it
    /// if it is missing and taking back any field someone else changed; returns it as stored.
    pub async fn apply<C>(&self, object: &C) -> Result<C, Error>
    where
        C: ApiObject,
    {
        let params = PatchParams::apply(field_manager()).force();
        let api = self.api_of(object)?;
        Ok(api
            .patch(&object.name_any(), &params, &Patch::Apply(object))
            .await?)
    }

    /// Applies `desired` as [`Context::apply`] does, unless the copy of it in `cache` (the
    /// watch of what the controller made) shows it applied already and unchanged since: a
    /// steady reconcile then sends no request at all.
    pub async fn apply_cached<C>(&self, desired: &C, cache: &Store<C>) -> Result<Applied<C>, Error>
    where
        C: ApiObject,
    {
        let observed = cached(cache, desired);
        self.apply_unless_up_to_date(desired, observed).await
    }

    /// Deletes the object named `name` in `namespace` if `cache` (the watch of what the
    /// controller made) holds it: an object the controller no longer wants, such as the
    /// PodDisruptionBudget of a workload scaled down to one pod.
    ///
    /// Only the cache tells whether it exists, so that a steady reconcile sends nothing. One
    /// the cache has not seen yet (just after the manager started) is deleted on the reconcile
    /// its watch event triggers; one deleted already by someone else is no error.
    pub async fn delete_cached<C>(
        &self,
        name: &str,
        namespace: &str,
        cache: &Store<C>,
    ) -> Result<(), Error>
    where
        C: ApiObject + Resource<Scope = NamespaceResourceScope>,
    {
        if cache.get(&ObjectRef::new(name).within(namespace)).is_none() {
            return Ok(());
        }
        match self
            .namespaced::<C>(namespace)
            .delete(name, &DeleteParams::default())
            .await
        {
            // Not `is_not_found()`: in kube 5.0 it ignores the code.
            Ok(_) => Ok(()),
            Err(::kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    /// Applies `desired` as [`Context::apply`] does, with its fingerprint (see
    /// [`crate::cache`]), unless `observed`, the stored object as last seen, is up to date.
    pub async fn apply_unless_up_to_date<C>(
        &self,
        desired: &C,
        observed: Option<C>,
    ) -> Result<Applied<C>, Error>
    where
        C: ApiObject,
    {
        let desired = fingerprinted(desired);
        if let Some(observed) = &observed
            && is_up_to_date(observed, &desired)
        {
            return Ok(Applied::unchanged(observed.clone()));
        }
        let applied = self.apply(&desired).await?;
        Ok(Applied {
            object: applied,
            before: observed,
            written: true,
        })
    }

    /// The stored object that `object` names (its kind, namespace and name), if it exists.
    pub async fn get_stored<C>(&self, object: &C) -> Result<Option<C>, Error>
    where
        C: ApiObject,
    {
        let api = self.api_of(object)?;
        Ok(api.get_opt(&object.name_any()).await?)
    }
}

#[cfg(test)]
mod tests {
    use ::k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::{test_kinds, testing};

    fn config_map(owner: &test_kinds::Widget) -> ConfigMap {
        let labels = AppLabels::new("widget", "settings", owner);
        ConfigMap {
            metadata: owned_by(owner, labels.all()),
            data: Some(BTreeMap::from([("size".to_owned(), "3".to_owned())])),
            ..ConfigMap::default()
        }
    }

    #[test]
    fn made_objects_are_named_after_and_owned_by_their_owner() {
        let widget = test_kinds::widget();
        let metadata = config_map(&widget).metadata;
        assert_eq!(metadata.name.as_deref(), Some(testing::NAME));
        assert_eq!(metadata.namespace.as_deref(), Some(testing::NAMESPACE));
        let owners = metadata.owner_references.expect("owner references");
        assert_eq!(owners.len(), 1);
        let owner = &owners[0];
        assert_eq!(owner.api_version, "example.com/v1");
        assert_eq!(owner.kind, "Widget");
        assert_eq!(owner.name, testing::NAME);
        assert_eq!(owner.uid, testing::UID);
        assert_eq!(owner.controller, Some(true));
    }

    #[test]
    fn made_objects_carry_the_recommended_labels() {
        let labels = AppLabels::new("widget", "settings", &test_kinds::widget());
        let selector = BTreeMap::from([
            ("app.kubernetes.io/instance".to_owned(), "test".to_owned()),
            ("app.kubernetes.io/name".to_owned(), "widget".to_owned()),
        ]);
        assert_eq!(labels.selector(), selector);
        assert_eq!(labels.label_selector().match_labels, Some(selector));
        assert_eq!(labels.label_selector().match_expressions, None);
        assert_eq!(
            labels.selector_string(),
            "app.kubernetes.io/instance=test,app.kubernetes.io/name=widget"
        );
        assert_eq!(
            labels.all(),
            BTreeMap::from([
                (
                    "app.kubernetes.io/component".to_owned(),
                    "settings".to_owned()
                ),
                ("app.kubernetes.io/instance".to_owned(), "test".to_owned()),
                (
                    "app.kubernetes.io/managed-by".to_owned(),
                    field_manager().to_owned()
                ),
                ("app.kubernetes.io/name".to_owned(), "widget".to_owned()),
            ])
        );
    }

    #[test]
    fn only_what_the_manager_made_for_the_app_is_watched() {
        let config = made_for("widget");
        assert_eq!(
            config.label_selector.as_deref(),
            Some(
                format!(
                    "app.kubernetes.io/managed-by={},app.kubernetes.io/name=widget",
                    field_manager()
                )
                .as_str()
            )
        );
    }

    #[tokio::test]
    async fn objects_are_applied_server_side_by_the_field_manager() {
        let (ctx, mut server) = testing::context();
        let desired = config_map(&test_kinds::widget());

        let stored = server
            .run(ctx.apply(&desired), async |server| {
                let request = server.expect_applied(&desired).await;
                request.reply(::http::StatusCode::OK, &desired);
            })
            .await
            .expect("the object is applied");
        assert_eq!(stored, desired);
    }

    #[tokio::test]
    async fn an_object_without_its_namespace_is_not_applied() {
        let (ctx, mut server) = testing::context();
        let mut desired = config_map(&test_kinds::widget());
        desired.metadata.namespace = None;

        let error = server
            .run(ctx.apply(&desired), async |_| {})
            .await
            .expect_err("no namespace");
        assert_eq!(error.reason(), "invalid_object");
    }

    #[tokio::test]
    async fn a_missing_object_reads_as_none() {
        let (ctx, mut server) = testing::context();
        let desired = config_map(&test_kinds::widget());

        let stored = server
            .run(ctx.get_stored(&desired), async |server| {
                server.expect_get(&desired, None).await;
            })
            .await
            .expect("a missing object is no error");
        assert_eq!(stored, None);
    }
}
