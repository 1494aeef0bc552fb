//! The custom kinds the runtime's own tests reconcile: compiled for those tests only, never
//! into a project.

use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use ::serde::{Deserialize, Serialize};

use crate::testing;

/// A namespaced custom resource for the machinery's own tests.
#[derive(::kube::CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus",
    derive = "Default",
    schema = "disabled"
)]
pub struct WidgetSpec {
    pub size: i32,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    pub conditions: Vec<Condition>,
    pub observed_generation: Option<i64>,
}

/// A cluster-scoped custom resource for the machinery's own tests.
#[derive(::kube::CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Gadget",
    derive = "Default",
    schema = "disabled"
)]
pub struct GadgetSpec {}

/// A namespaced custom resource that references a [`Widget`] by name.
#[derive(::kube::CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Gizmo",
    namespaced,
    status = "WidgetStatus",
    derive = "Default",
    schema = "disabled"
)]
pub struct GizmoSpec {
    pub widget_ref: String,
}

/// A new [`Gizmo`] (see [`testing::new_object`]), which names no Widget yet.
pub fn gizmo() -> Gizmo {
    testing::new_object()
}

/// A new [`Widget`] (see [`testing::new_object`]).
pub fn widget() -> Widget {
    testing::new_object()
}

/// A new [`Gadget`] (see [`testing::new_object`]).
pub fn gadget() -> Gadget {
    testing::new_object()
}
