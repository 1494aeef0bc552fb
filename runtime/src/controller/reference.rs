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

use crate::context::ApiObject;
use crate::reconcile::{AddWatch, Reconcile, Setup};
use crate::status::Conditions;
use crate::{Context, Error};

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
    /// changed object (found in the controller's cache, see [`referencing`]).
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
pub fn referencing<'a, K: ApiObject>(
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
}

#[cfg(test)]
mod tests {
    use ::k8s_openapi::api::core::v1::{Container, PodSpec};
    use ::k8s_openapi::jiff::Timestamp;

    use super::*;
    use crate::test_kinds::{self, Gizmo, Widget};
    use crate::testing;

    fn reference() -> Reference<Gizmo, Widget> {
        Reference::new("WIDGET", |gizmo| &gizmo.spec.widget_ref)
    }

    fn gizmo(name: &str, namespace: &str, widget: &str) -> Gizmo {
        let mut gizmo: Gizmo = testing::new_object();
        gizmo.metadata.name = Some(name.to_owned());
        gizmo.metadata.namespace = Some(namespace.to_owned());
        gizmo.spec.widget_ref = widget.to_owned();
        gizmo
    }

    fn names(env: &[EnvVar]) -> Vec<(&str, &str)> {
        env.iter()
            .map(|var| (var.name.as_str(), var.value.as_deref().unwrap_or_default()))
            .collect()
    }

    #[test]
    fn the_environment_names_the_object_and_its_service_when_there_is_one() {
        assert_eq!(
            names(&env("MY_SQL_CLUSTER", "main", "team-a", None)),
            [("MY_SQL_CLUSTER_NAME", "main")]
        );
        assert_eq!(
            names(&reference().service_port(3306).env("main", "team-a")),
            [
                ("WIDGET_NAME", "main"),
                ("WIDGET_HOST", "main.team-a.svc"),
                ("WIDGET_PORT", "3306")
            ]
        );
    }

    #[test]
    fn a_referenced_object_maps_back_to_the_objects_of_its_namespace_that_name_it() {
        let gizmos = [
            gizmo("a", "team-a", "main"),
            gizmo("b", "team-a", "other"),
            gizmo("c", "team-b", "main"),
            gizmo("d", "team-a", "main"),
        ];
        let found = referencing(&gizmos, Some("team-a"), "main", |g| &g.spec.widget_ref);
        let found: Vec<&str> = found.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(found, ["a", "d"]);
        assert!(referencing(&gizmos, Some("team-c"), "main", |g| &g.spec.widget_ref).is_empty());
    }

    #[test]
    fn the_environment_goes_after_each_containers_own() {
        let own = EnvVar {
            name: "LOG_LEVEL".to_owned(),
            ..EnvVar::default()
        };
        let container = |name: &str, env: Option<Vec<EnvVar>>| Container {
            name: name.to_owned(),
            env,
            ..Container::default()
        };
        let pods = PodTemplateSpec {
            spec: Some(PodSpec {
                containers: vec![container("a", Some(vec![own])), container("b", None)],
                ..PodSpec::default()
            }),
            ..PodTemplateSpec::default()
        };
        let added = env("WIDGET", "main", "team-a", None);
        let containers = with_env(pods, &added).spec.expect("a pod spec").containers;
        let env_of = |i: usize| containers[i].env.clone().unwrap_or_default();
        assert_eq!(
            names(&env_of(0)),
            [("LOG_LEVEL", ""), ("WIDGET_NAME", "main")]
        );
        assert_eq!(names(&env_of(1)), [("WIDGET_NAME", "main")]);
    }

    #[test]
    fn the_condition_says_whether_the_object_exists() {
        let conditions = Conditions::of(&test_kinds::gizmo(), Timestamp::UNIX_EPOCH);
        let missing = Resolution::NotFound {
            message: "Widget \"main\" does not exist".to_owned(),
        };
        let condition = missing.condition(&conditions);
        assert_eq!(
            (condition.status.as_str(), condition.reason.as_str()),
            ("False", NOT_FOUND)
        );
        let found = Resolution::Found { env: Vec::new() }.condition(&conditions);
        assert_eq!(
            (found.status.as_str(), found.reason.as_str()),
            ("True", FOUND)
        );
    }

    #[tokio::test]
    async fn resolving_reads_the_referenced_object_in_the_objects_namespace() {
        let mut gizmo = test_kinds::gizmo();
        gizmo.spec.widget_ref = testing::NAME.to_owned();
        let widget = test_kinds::widget();
        let (ctx, mut server) = testing::context();
        let resolution = server
            .run(reference().resolve(&gizmo, &ctx), async |server| {
                server.expect_get(&widget, None).await;
            })
            .await
            .expect("a missing object is no error");
        let Resolution::NotFound { message } = resolution else {
            panic!("{resolution:?}");
        };
        assert!(message.contains("Widget \"test\" does not exist in namespace \"team-a\""));

        let (ctx, mut server) = testing::context();
        let resolution = server
            .run(reference().resolve(&gizmo, &ctx), async |server| {
                server.expect_get(&widget, Some(&widget)).await;
            })
            .await
            .expect("resolves");
        assert_eq!(
            resolution,
            Resolution::Found {
                env: env("WIDGET", "test", "team-a", None)
            }
        );
    }

    #[tokio::test]
    async fn an_empty_name_is_reported_without_a_request() {
        let (ctx, mut server) = testing::context();
        let resolution = server
            .run(
                reference().resolve(&test_kinds::gizmo(), &ctx),
                async |_| {},
            )
            .await
            .expect("resolves");
        assert!(!resolution.found(), "{resolution:?}");
    }
}
