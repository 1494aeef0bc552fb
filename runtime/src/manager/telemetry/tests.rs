use super::*;

#[test]
fn defaults_to_info() {
    assert_eq!(
        env_filter("").unwrap().max_level_hint(),
        Some(LevelFilter::INFO)
    );
}

#[test]
fn honours_rust_log() {
    assert_eq!(
        env_filter("debug").unwrap().max_level_hint(),
        Some(LevelFilter::DEBUG)
    );
    assert_eq!(
        env_filter("warn,kube=trace").unwrap().max_level_hint(),
        Some(LevelFilter::TRACE)
    );
}

#[test]
fn rejects_an_invalid_filter() {
    let err = env_filter("kube=loud").unwrap_err();
    assert!(
        format!("{err:#}").contains("RUST_LOG=\"kube=loud\""),
        "{err:#}"
    );
}
