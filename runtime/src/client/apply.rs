//! Server-side apply under the manager's field manager: an object created if missing and taken
//! back if someone else changed it, sent only when the controller's copy of it says it is not
//! up to date already.

use ::std::fmt::Debug;

use ::kube::api::{DeleteParams, Patch, PatchParams};
use ::kube::core::NamespaceResourceScope;
use ::kube::runtime::reflector::{ObjectRef, Store};
use ::kube::{Resource, ResourceExt as _};

use super::cache::cached;
use super::context::Context;
use super::fingerprint::{fingerprinted, is_up_to_date};
use crate::error::Error;
use crate::identity::field_manager;
use crate::object::ApiObject;

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
    /// steady reconcile then sends no request at all. A controller's reconciles wait until
    /// that watch has listed (see
    /// [`Setup::owns_cached`](crate::controller::Setup::owns_cached)), so a missing copy is an
    /// object to create, not one the watch has not shown yet.
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
    /// Only the cache tells whether it exists, so that a steady reconcile sends nothing: a
    /// controller reconciles once its owned caches have listed (see
    /// [`Setup::owns_cached`](crate::controller::Setup::owns_cached)), so a missing copy is a
    /// missing object, or one made since, whose watch event reconciles its owner again. One
    /// deleted already by someone else is no error.
    pub(crate) async fn delete_cached<C>(
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
    pub(crate) async fn apply_unless_up_to_date<C>(
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
mod tests;
