//! Why a reconcile failed, in a form the failure metric can count.

use ::kube::runtime::finalizer;

/// Why a reconcile failed. Each variant has a short [`Error::reason`] for the failure metric.
#[derive(Debug, ::thiserror::Error)]
pub enum Error {
    /// Adding or removing the finalizer failed, or `apply`/`cleanup` failed inside it.
    #[error(transparent)]
    Finalizer(#[from] Box<finalizer::Error<Error>>),
    /// A call to the Kubernetes API failed.
    #[error("Kubernetes API call failed: {0}")]
    Kube(#[from] ::kube::Error),
    /// A namespaced object, or one made for it, has no namespace.
    #[error("object has no namespace")]
    MissingNamespace,
    /// A step of the controller's own logic failed; see [`Error::failed`].
    #[error("{message}")]
    Failed {
        /// The failure metric's label.
        reason: &'static str,
        /// What went wrong.
        message: String,
    },
}

impl Error {
    /// A failure of the controller's own logic: `reason` labels the failure metric, so keep it
    /// to a small fixed set (`backup_failed`, not the message); `message` says what went wrong.
    pub fn failed(reason: &'static str, message: impl Into<String>) -> Self {
        Error::Failed {
            reason,
            message: message.into(),
        }
    }

    /// A short, low-cardinality label for the reconcile failure metric.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::Finalizer(error) => match error.as_ref() {
                finalizer::Error::ApplyFailed(error) | finalizer::Error::CleanupFailed(error) => {
                    error.reason()
                }
                finalizer::Error::AddFinalizer(_) | finalizer::Error::RemoveFinalizer(_) => {
                    "finalizer"
                }
                finalizer::Error::UnnamedObject | finalizer::Error::InvalidFinalizer => {
                    "invalid_object"
                }
            },
            Error::Kube(_) => "kube_api",
            Error::MissingNamespace => "invalid_object",
            Error::Failed { reason, .. } => reason,
        }
    }
}

#[cfg(test)]
mod tests;
