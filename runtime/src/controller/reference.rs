//! A kind's reference to an object of another kind of the project in its own namespace
//! (`opgen create api --references`): [`Reference`] resolves it on every reconcile, reports it
//! in the [`REFERENCED`] condition, and hands the referenced object's address to the pods'
//! environment. The referencing kind's controller watches the referenced kind, so that the
//! creation of a referenced object reconciles at once the objects that name it, rather than
//! at their next resync.

use ::std::marker::PhantomData;

use ::futures::future::BoxFuture;
use ::k8s_openapi::NamespaceResourceScope;
use ::k8s_openapi::api::core::v1::{EnvVar, PodTemplateSpec};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use ::kube::ResourceExt as _;
use ::kube::runtime::reflector::ObjectRef;
use ::kube::runtime::watcher;

use crate::client::Context;
use crate::conditions::Conditions;
use crate::controller::{AddWatch, Reconcile, Setup};
use crate::error::Error;
use crate::object::ApiObject;

/// The condition that says whether the object's reference names an object that exists.
pub const REFERENCED: &str = "Referenced";
/// The reason of [`REFERENCED`] while the referenced object does not exist.
pub const NOT_FOUND: &str = "ReferenceNotFound";
/// The reason of [`REFERENCED`] once the referenced object exists.
pub const FOUND: &str = "ReferenceFound";

/// The name of the object of the referenced kind that an object of `K` names.
pub type ReferencedName<K> = fn(&K) -> &str;

/// What a reference resolved to on one reconcile.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolution {
    /// The referenced object exists: the environment that reaches it.
    Found {
        /// `<KIND>_NAME`, and with a Service `<KIND>_HOST` and `<KIND>_PORT`.
        env: Vec<EnvVar>,
    },
    /// It does not (yet): what to tell the user.
    NotFound {
        /// The [`REFERENCED`] condition's message.
        message: String,
    },
}

impl Resolution {
    /// The [`REFERENCED`] condition that reports this resolution.
    pub fn condition(&self, conditions: &Conditions) -> Condition {
        match self {
            Resolution::Found { .. } => {
                conditions.set(REFERENCED, true, FOUND, "The referenced object exists")
            }
            Resolution::NotFound { message } => {
                conditions.set(REFERENCED, false, NOT_FOUND, message)
            }
        }
    }

    /// Whether the referenced object exists.
    pub fn found(&self) -> bool {
        matches!(self, Resolution::Found { .. })
    }
}

/// A reference from the objects of `K` to objects of the kind `T` in their namespace, which
/// `name` reads from the object's spec.
pub struct Reference<K, T> {
    env_prefix: &'static str,
    name: ReferencedName<K>,
    port: Option<i32>,
    referenced: PhantomData<fn() -> T>,
}

impl<K, T> Reference<K, T>
where
    K: ApiObject,
    T: ApiObject + ::kube::Resource<Scope = NamespaceResourceScope>,
{
    /// The reference that `name` reads, whose environment variables start with `env_prefix`
    /// (the referenced kind in SCREAMING_SNAKE_CASE: `MY_SQL_CLUSTER`).
    pub fn new(env_prefix: &'static str, name: ReferencedName<K>) -> Self {
        Self {
            env_prefix,
            name,
            port: None,
            referenced: PhantomData,
        }
    }

    /// The referenced objects are served by a Service named after each of them, on `port`:
    /// the environment then holds its host and port too.
    #[must_use]
    pub fn service_port(mut self, port: i32) -> Self {
        self.port = Some(port);
        self
    }

    /// The environment that reaches the referenced object `name` in `namespace`.
    pub fn env(&self, name: &str, namespace: &str) -> Vec<EnvVar> {
        env(self.env_prefix, name, namespace, self.port)
    }

    /// Reads the object `obj` references, in `obj`'s namespace.
    pub async fn resolve(&self, obj: &K, ctx: &Context) -> Result<Resolution, Error> {
        let namespace = obj.namespace().unwrap_or_default();
        let name = (self.name)(obj);
        if name.is_empty() {
            return Ok(Resolution::NotFound {
                message: format!("The spec names no {}: set its name", T::kind(&())),
            });
        }
        let found = ctx.namespaced::<T>(&namespace).get_opt(name).await?;
        Ok(match found {
            Some(_) => Resolution::Found {
                env: self.env(name, &namespace),
            },
            None => Resolution::NotFound {
                message: format!(
                    "{} {name:?} does not exist in namespace {namespace:?}: create it, or name another in the spec",
                    T::kind(&())
                ),
            },
        })
    }

    /// Adds to `setup` a watch of `T` mapped back to the objects of `K` that reference the
    /// changed object (found in the controller's cache).
    pub fn watch<R: Reconcile<Object = K>>(&self, setup: Setup<R>) -> Setup<R> {
        setup.watching(self.add_watch())
    }

    fn add_watch(&self) -> AddWatch<K> {
        let name = self.name;
        Box::new(move |controller, ctx| {
            let store = controller.store();
            controller.watches(
                ctx.watched::<T>(),
                watcher::Config::default(),
                move |referenced: T| {
                    let namespace = referenced.namespace();
                    let objects = store.state();
                    referencing(
                        objects.iter().map(|obj| &**obj),
                        namespace.as_deref(),
                        &referenced.name_any(),
                        name,
                    )
                },
            )
        })
    }
}

/// The environment that reaches the object `name` in `namespace`: `<prefix>_NAME`, and with a
/// Service on `port`, `<prefix>_HOST` (`<name>.<namespace>.svc`) and `<prefix>_PORT`.
pub fn env(prefix: &str, name: &str, namespace: &str, port: Option<i32>) -> Vec<EnvVar> {
    let var = |suffix: &str, value: String| EnvVar {
        name: format!("{prefix}_{suffix}"),
        value: Some(value),
        ..EnvVar::default()
    };
    let mut env = vec![var("NAME", name.to_owned())];
    if let Some(port) = port {
        env.push(var("HOST", format!("{name}.{namespace}.svc")));
        env.push(var("PORT", port.to_string()));
    }
    env
}

/// The objects among `objects` that reference the object `name` in `namespace`: the watch of
/// the referenced kind reconciles them when it changes.
pub(crate) fn referencing<'a, K: ApiObject>(
    objects: impl IntoIterator<Item = &'a K>,
    namespace: Option<&str>,
    name: &str,
    referenced: ReferencedName<K>,
) -> Vec<ObjectRef<K>> {
    objects
        .into_iter()
        .filter(|obj| obj.namespace().as_deref() == namespace && referenced(obj) == name)
        .map(ObjectRef::from_obj)
        .collect()
}

/// `pods` with `env` added to each of their containers, after what they set themselves.
pub fn with_env(mut pods: PodTemplateSpec, env: &[EnvVar]) -> PodTemplateSpec {
    for container in pods.spec.iter_mut().flat_map(|spec| &mut spec.containers) {
        container
            .env
            .get_or_insert_default()
            .extend(env.iter().cloned());
    }
    pods
}

/// A [`Reference`] of any referenced kind, as the reconcilers of referencing kinds keep it.
pub(crate) trait Resolve<K: ApiObject>: Send + Sync {
    /// See [`Reference::resolve`].
    fn resolve<'a>(
        &'a self,
        obj: &'a K,
        ctx: &'a Context,
    ) -> BoxFuture<'a, Result<Resolution, Error>>;
    /// The watch that [`Reference::watch`] adds.
    fn add_watch(&self) -> AddWatch<K>;
    /// The referenced kind, such as `MySQLCluster`.
    fn referenced_kind(&self) -> String;
}

impl<K, T> Resolve<K> for Reference<K, T>
where
    K: ApiObject,
    T: ApiObject + ::kube::Resource<Scope = NamespaceResourceScope>,
{
    fn resolve<'a>(
        &'a self,
        obj: &'a K,
        ctx: &'a Context,
    ) -> BoxFuture<'a, Result<Resolution, Error>> {
        Box::pin(Reference::resolve(self, obj, ctx))
    }

    fn add_watch(&self) -> AddWatch<K> {
        Reference::add_watch(self)
    }

    fn referenced_kind(&self) -> String {
        T::kind(&()).into_owned()
    }
}

#[cfg(test)]
mod tests;
