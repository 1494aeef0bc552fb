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
