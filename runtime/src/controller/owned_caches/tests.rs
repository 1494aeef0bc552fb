use ::futures::FutureExt as _;
use ::k8s_openapi::api::core::v1::Service;
use ::kube::runtime::reflector;
use ::kube::runtime::watcher::Event;

use super::OwnedCaches;

#[tokio::test]
async fn a_controller_that_owns_no_cache_opens_at_once() {
    let listed = OwnedCaches::default().listed();
    assert!(listed.now_or_never().is_some());
}

#[tokio::test(start_paused = true)]
async fn reconciles_wait_until_every_cache_has_listed() {
    let (services, mut service_writer) = reflector::store::<Service>();
    let (others, mut other_writer) = reflector::store::<Service>();
    let mut caches = OwnedCaches::default();
    caches.add(services);
    caches.add(others);
    let listed = caches.listed();

    assert!(listed.clone().now_or_never().is_none());
    service_writer.apply_watcher_event(&Event::Init);
    service_writer.apply_watcher_event(&Event::InitDone);
    assert!(
        listed.clone().now_or_never().is_none(),
        "one cache has not listed yet"
    );
    // Past the patience, it still waits (and says so).
    ::tokio::time::sleep(super::PATIENCE * 2).await;
    assert!(listed.clone().now_or_never().is_none());
    other_writer.apply_watcher_event(&Event::Init);
    other_writer.apply_watcher_event(&Event::InitDone);
    ::tokio::time::timeout(::std::time::Duration::from_secs(1), listed)
        .await
        .expect("both caches have listed");
}

#[tokio::test]
async fn a_cache_nothing_will_fill_is_not_waited_for() {
    let (services, writer) = reflector::store::<Service>();
    let mut caches = OwnedCaches::default();
    caches.add(services);
    let listed = caches.listed();
    drop(writer);
    ::tokio::time::timeout(::std::time::Duration::from_secs(1), listed)
        .await
        .expect("a dropped writer ends the wait");
}
