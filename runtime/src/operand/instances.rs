//! The operand machinery compiled here, once, at the Kubernetes kinds operands make, so that a
//! project's debug builds link it instead of compiling it again.
//!
//! Generic code is compiled in the crate that names its types. An operand's controller is
//! generic over the project's kind, so everything it does with a Deployment or a Service (the
//! watch, the decoding, the apply, the comparison with the cached copy) was compiled in the
//! project: in its library, and again in its unit-test build. In an unoptimized build rustc
//! reuses the generic instances a dependency has compiled (`-Z share-generics`, on by default
//! below `opt-level` 2), so compiling them here takes them out of every build of the project.
//! Measured on a project of three kinds, two of them operands: 374,000 lines of LLVM IR
//! instead of 882,000, its library in 8 CPU-seconds instead of 17 and its unit-test build in
//! 12 instead of 20; the runtime's own build, once, takes 6 more.
//!
//! An optimized build shares nothing (it inlines across crates instead), so the instances are
//! only made where `debug_assertions` marks the `dev` and `test` profiles.
//!
//! What is instantiated is what a controller generic over its kind calls with these kinds
//! alone: a function that also takes the project's kind (such as `Context::apply_operand`) is
//! compiled in the project whatever this module holds.

#![cfg(debug_assertions)]

use ::std::future::Future;
use ::std::pin::Pin;

use ::futures::stream::BoxStream;
use ::k8s_openapi::NamespaceResourceScope;
use ::k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use ::k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use ::k8s_openapi::api::batch::v1::{CronJob, Job};
use ::k8s_openapi::api::core::v1::Service;
use ::k8s_openapi::api::policy::v1::PodDisruptionBudget;
use ::kube::Resource;
use ::kube::api::PartialObjectMeta;
use ::kube::runtime::reflector::{Store, store::Writer};
use ::kube::runtime::watcher;

use super::budget;
use super::changes::changes;
use super::workload::Workload;
use super::workload_cache::WorkloadCache;
use super::workload_copy::WorkloadCopy;
use crate::client::Context;
use crate::client::cache::cached_watch;
use crate::controller::setup::metadata_watch;
use crate::object::ApiObject;

/// The futures of the calls an instance makes: boxing each one as a `dyn Future` compiles its
/// `poll`, which is where an `async fn`'s body is compiled.
type Calls<'a> = Vec<Pin<Box<dyn Future<Output = ()> + Send + 'a>>>;

type WorkloadCalls<W> = for<'a> fn(
    &'a Context,
    &'a W,
    &'a WorkloadCache<W>,
    &'a Store<PodDisruptionBudget>,
) -> Calls<'a>;
type CompanionCalls<C> = for<'a> fn(&'a Context, &'a C, &'a Store<C>) -> Calls<'a>;
type MadeCalls<C> = for<'a> fn(&'a Context, &'a C) -> Calls<'a>;
type CachedWatch<C> =
    fn(&Context, Writer<C>) -> BoxStream<'static, Result<watcher::Event<C>, watcher::Error>>;
type MetadataWatch<C> =
    fn(&Context) -> BoxStream<'static, Result<PartialObjectMeta<C>, watcher::Error>>;

/// What an operand does with its workload, whatever its own kind: see `Context::apply_workload`.
fn workload_calls<'a, W: Workload>(
    ctx: &'a Context,
    desired: &'a W,
    cache: &'a WorkloadCache<W>,
    budgets: &'a Store<PodDisruptionBudget>,
) -> Calls<'a> {
    let copy = cache.copy_of(desired);
    if let Some(copy) = copy {
        cache.judge(&copy, desired);
        changes(Some(&copy.restored()), desired, "");
    }
    cache.prove(desired);
    ctx.recent_applies.record(desired);
    ctx.recent_applies.awaits(desired);
    ctx.recent_applies.seen(desired);
    vec![
        Box::pin(async move { drop(ctx.apply(desired).await) }),
        Box::pin(async move { drop(ctx.get_stored(desired).await) }),
        Box::pin(async move { drop(ctx.apply_unless_up_to_date(desired, None).await) }),
        Box::pin(async move { drop(budget::keep(ctx, desired, budgets).await) }),
    ]
}

/// What an operand does with a Service, a budget or an autoscaler: applies it unless its cached
/// copy is up to date, or deletes it.
fn companion_calls<'a, C>(ctx: &'a Context, desired: &'a C, cache: &'a Store<C>) -> Calls<'a>
where
    C: ApiObject + Resource<Scope = NamespaceResourceScope>,
{
    vec![
        Box::pin(async move { drop(ctx.apply_cached(desired, cache).await) }),
        Box::pin(async move { drop(ctx.delete_cached("", "", cache).await) }),
    ]
}

/// What a Job's or a CronJob's operand does with the one it makes.
fn made_calls<'a, C: ApiObject>(ctx: &'a Context, desired: &'a C) -> Calls<'a> {
    vec![
        Box::pin(async move { drop(ctx.get_stored(desired).await) }),
        Box::pin(async move { drop(ctx.apply(desired).await) }),
    ]
}

/// The watch `Setup::owns_cached` keeps a cache of.
fn cached<C: ApiObject>(
    ctx: &Context,
    writer: Writer<C>,
) -> BoxStream<'static, Result<watcher::Event<C>, watcher::Error>> {
    cached_watch(ctx.watched::<C>(), watcher::Config::default(), writer)
}

/// The watch `Setup::owns` triggers its owners from.
fn metadata<C: ApiObject>(
    ctx: &Context,
) -> BoxStream<'static, Result<PartialObjectMeta<C>, watcher::Error>> {
    metadata_watch(ctx.watched(), watcher::Config::default())
}

// Statics are compiled whether anything reads them or not, and with them every function they
// point to; `#[used]` says they are meant to be unread.
#[used]
static DEPLOYMENT: (
    WorkloadCalls<Deployment>,
    CachedWatch<WorkloadCopy<Deployment>>,
) = (workload_calls, cached);
#[used]
static STATEFULSET: (
    WorkloadCalls<StatefulSet>,
    CachedWatch<WorkloadCopy<StatefulSet>>,
) = (workload_calls, cached);
#[used]
static SERVICE: (CompanionCalls<Service>, CachedWatch<Service>) = (companion_calls, cached);
#[used]
static BUDGET: (
    CompanionCalls<PodDisruptionBudget>,
    CachedWatch<PodDisruptionBudget>,
) = (companion_calls, cached);
#[used]
static AUTOSCALER: (
    CompanionCalls<HorizontalPodAutoscaler>,
    CachedWatch<HorizontalPodAutoscaler>,
) = (companion_calls, cached);
#[used]
static JOB: (MadeCalls<Job>, MetadataWatch<Job>) = (made_calls, metadata);
#[used]
static CRONJOB: (MadeCalls<CronJob>, MetadataWatch<CronJob>) = (made_calls, metadata);
