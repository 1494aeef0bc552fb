use super::*;

#[test]
fn errors_have_short_reasons_for_the_failure_metric() {
    let failed = Error::failed("widget_failed", "the widget broke");
    assert_eq!(failed.reason(), "widget_failed");
    assert_eq!(failed.to_string(), "the widget broke");

    let inside_finalizer = Error::from(Box::new(finalizer::Error::ApplyFailed(failed)));
    assert_eq!(inside_finalizer.reason(), "widget_failed");
    let unnamed = Error::from(Box::new(finalizer::Error::<Error>::UnnamedObject));
    assert_eq!(unnamed.reason(), "invalid_object");
    assert_eq!(Error::MissingNamespace.reason(), "invalid_object");
}
