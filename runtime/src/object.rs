//! The objects the runtime works with: what a kind must be for the machinery to read, write and
//! watch its objects ([`ApiObject`], of either scope: [`KindScope`]), and the metadata of the
//! objects a controller makes for a custom object: named after it, labelled with Kubernetes'
//! recommended labels, and owned by it.

use ::std::collections::BTreeMap;
use ::std::fmt::Debug;

use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use ::k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use ::kube::runtime::watcher;
use ::kube::{Api, Client, Resource, ResourceExt as _};
use ::serde::Serialize;
use ::serde::de::DeserializeOwned;

use crate::error::Error;
use crate::identity::field_manager;

/// An object of a kind the machinery can read, write and watch: a typed kind (a custom kind,
/// or one of Kubernetes' own) of either scope. Every such kind is one.
pub trait ApiObject:
    Resource<DynamicType = (), Scope: KindScope>
    + Clone
    + Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
}

impl<K> ApiObject for K where
    K: Resource<DynamicType = (), Scope: KindScope>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// How the objects of one scope are reached: namespaced kinds through their namespace,
/// cluster-scoped kinds cluster-wide. It lets the machinery serve kinds of either scope.
pub trait KindScope: Sized {
    /// Whether objects of this scope live in a namespace.
    const NAMESPACED: bool;

    /// The API to watch objects through, restricted to `namespace` where the scope allows.
    fn watched<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>;

    /// The API that reads and writes `obj`.
    fn api_of<K>(client: Client, obj: &K) -> Result<Api<K>, Error>
    where
        K: Resource<DynamicType = (), Scope = Self>;
}

impl KindScope for NamespaceResourceScope {
    const NAMESPACED: bool = true;

    fn watched<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        match namespace {
            Some(namespace) => Api::namespaced(client, namespace),
            None => Api::all(client),
        }
    }

    fn api_of<K>(client: Client, obj: &K) -> Result<Api<K>, Error>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        let namespace = obj.namespace().ok_or(Error::MissingNamespace)?;
        Ok(Api::namespaced(client, &namespace))
    }
}

impl KindScope for ClusterResourceScope {
    const NAMESPACED: bool = false;

    fn watched<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Api::all(client)
    }

    fn api_of<K>(client: Client, _obj: &K) -> Result<Api<K>, Error>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Ok(Api::all(client))
    }
}

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

#[cfg(test)]
mod tests;
